<%-- A page that does not compile, so Jasper reports it (tomcat.sh). --%>
<% int x = "not a number"; %>
