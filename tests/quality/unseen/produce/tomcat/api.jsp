<%-- A second small web app (a JSON API) tomcat.sh deploys, redeploys and removes. --%>
<%@ page contentType="application/json" import="java.util.logging.*" %>
<%
Logger log = Logger.getLogger("com.example.api.Items");
String key = request.getParameter("key");
if (key == null) {
  log.warning("Rejected request without API key from " + request.getRemoteAddr());
  response.setStatus(401);
} else if (key.startsWith("slow")) {
  log.info("Slow backend call for key " + key + " took " + (key.length() * 311) + " ms");
} else if (key.startsWith("bad")) {
  throw new IllegalArgumentException("Malformed API key: " + key);
} else {
  log.fine("Served items for key " + key);
}
%>{"items":[]}
