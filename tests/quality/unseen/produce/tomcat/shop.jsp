<%-- The shop web app tomcat.sh deploys: orders, payments, stock and logins, logged through
     ServletContext.log and java.util.logging as an application on Tomcat would. --%>
<%@ page contentType="text/plain" import="java.util.logging.*" %>
<%
Logger orders = Logger.getLogger("com.example.shop.Orders");
Logger auth = Logger.getLogger("com.example.shop.Auth");
String op = request.getParameter("op");
String user = request.getParameter("user");
int id = Integer.parseInt(request.getParameter("id") == null ? "0" : request.getParameter("id"));
if ("order".equals(op)) {
  orders.info("Order " + id + " placed by " + user + " for " + (id % 5 + 1) + " items, total " + (id * 7 % 300) + ".99 EUR");
} else if ("pay".equals(op)) {
  if (id % 3 == 0) orders.warning("Payment declined for order " + id + ": card expired");
  else if (id % 3 == 1) orders.warning("Payment declined for order " + id + ": insufficient funds");
  else orders.info("Payment captured for order " + id + " via " + (id % 2 == 0 ? "card" : "paypal"));
} else if ("stock".equals(op)) {
  orders.warning("Item SKU-" + (1000 + id % 40) + " out of stock, requested " + (id % 4 + 1));
} else if ("login".equals(op)) {
  if (id % 4 == 0) auth.warning("Login failed for user " + user + " from " + request.getRemoteAddr() + " (bad password)");
  else auth.info("User " + user + " logged in from " + request.getRemoteAddr());
} else if ("logout".equals(op)) {
  application.log("Session " + session.getId() + " closed for user " + user);
} else if ("refresh".equals(op)) {
  application.log("Catalog cache refreshed: " + (id * 13 % 500) + " entries in " + (id % 90) + " ms");
} else if ("checkout".equals(op)) {
  try {
    if (id % 2 == 0) throw new IllegalStateException("inventory locked by job " + (id * 3));
    Object o = null;
    o.toString();
  } catch (RuntimeException e) {
    orders.log(Level.SEVERE, "Checkout failed for order " + id, e);
  }
} else if ("crash".equals(op)) {
  if (id % 3 == 0) { String s = null; out.println(s.length()); }
  if (id % 3 == 1) out.println(Integer.parseInt("qty" + id));
  out.println(100 / (id % 3 - 2));
}
out.println("ok");
%>
