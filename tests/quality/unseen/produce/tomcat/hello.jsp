<%-- A page of the web app tomcat.sh deploys with a web.xml that does not parse. --%>
hello
