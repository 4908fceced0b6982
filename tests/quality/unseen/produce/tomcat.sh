#!/bin/bash
# Produces Tomcat/Tomcat_raw.log: a real Apache Tomcat 10.1 (Debian 12's tomcat10) logging
# through JULI's OneLineFormatter (one file for every logger) while curl drives two web apps of
# produce/tomcat/ (orders, payments, logins; caught and uncaught exceptions with stack traces, a
# JSP that does not compile, too many parameters, garbage requests), and web apps are deployed,
# undeployed, redeployed and broken, with a restart. Usage: tomcat.sh OUTDIR   (HTTP on
# 127.0.0.1:8095, shutdown port 8096; Java 17)
set -eu
out=$1
here=$(cd "$(dirname "$0")/tomcat" && pwd)
w=$(mktemp -d /tmp/unseen-tomcat.XXXXXX)
mkdir -p "$w/conf" "$w/logs" "$w/webapps" "$w/work" "$w/temp" "$w/build"
cp /etc/tomcat10/web.xml /etc/tomcat10/catalina.properties /etc/tomcat10/context.xml "$w/conf/"
cat >"$w/conf/server.xml" <<C
<?xml version="1.0" encoding="UTF-8"?>
<Server port="8096" address="127.0.0.1" shutdown="SHUTDOWN">
  <Listener className="org.apache.catalina.startup.VersionLoggerListener" />
  <Listener className="org.apache.catalina.core.JreMemoryLeakPreventionListener" />
  <Listener className="org.apache.catalina.core.ThreadLocalLeakPreventionListener" />
  <Service name="Catalina">
    <Connector port="8095" address="127.0.0.1" protocol="HTTP/1.1" connectionTimeout="5000"
               maxParameterCount="20" maxPostSize="4096" />
    <Engine name="Catalina" defaultHost="localhost" backgroundProcessorDelay="2">
      <Host name="localhost" appBase="webapps" unpackWARs="true" autoDeploy="true" />
    </Engine>
  </Service>
</Server>
C
cat >"$w/conf/logging.properties" <<C
handlers = 1catalina.org.apache.juli.FileHandler
.handlers = 1catalina.org.apache.juli.FileHandler
.level = INFO
1catalina.org.apache.juli.FileHandler.level = FINE
1catalina.org.apache.juli.FileHandler.directory = $w/logs
1catalina.org.apache.juli.FileHandler.prefix = catalina.
1catalina.org.apache.juli.FileHandler.formatter = org.apache.juli.OneLineFormatter
com.example.api.level = FINE
C
war() {  # war NAME FILE:PATH...
  local name=$1 d="$w/build/$1"; shift
  rm -rf "$d"; mkdir -p "$d"
  for f in "$@"; do mkdir -p "$d/$(dirname "${f#*:}")"; cp "$here/${f%%:*}" "$d/${f#*:}"; done
  (cd "$d" && jar cf "$w/build/$name.war" .)
}
war shop shop.jsp:index.jsp broken.jsp:broken.jsp
war api api.jsp:index.jsp
war legacy hello.jsp:index.jsp broken-web.xml:WEB-INF/web.xml
cp "$w/build/shop.war" "$w/build/api.war" "$w/webapps/"
export CATALINA_HOME=/usr/share/tomcat10 CATALINA_BASE=$w CATALINA_PID=$w/tomcat.pid
start() {
  /usr/share/tomcat10/bin/catalina.sh start >/dev/null 2>&1
  for _ in $(seq 1 60); do curl -s -o /dev/null "http://127.0.0.1:8095/shop/" && return 0; sleep 1; done
  echo "tomcat did not start" >&2; return 1
}
stop() { /usr/share/tomcat10/bin/catalina.sh stop 20 -force >/dev/null 2>&1 || true; }
start

c() { timeout 15 curl -s -o /dev/null "$@" </dev/null || true; }
s=http://127.0.0.1:8095/shop/
users=(alice bob carol dave erin)
for i in $(seq 1 150); do
  u=${users[$((i % 5))]}
  c "$s?op=login&user=$u&id=$i"
  c "$s?op=order&user=$u&id=$i"
  c "$s?op=pay&user=$u&id=$i"
  [ $((i % 2)) = 0 ] && c "$s?op=stock&id=$i"
  [ $((i % 3)) = 0 ] && c "$s?op=logout&user=$u"
  [ $((i % 4)) = 1 ] && c "$s?op=refresh&id=$i"
  [ $((i % 5)) = 2 ] && c "$s?op=checkout&id=$i"
  [ $((i % 6)) = 3 ] && c "$s?op=crash&id=$i"
  [ $((i % 3)) = 1 ] && c "http://127.0.0.1:8095/api/?key=k$i"
  [ $((i % 5)) = 0 ] && c "http://127.0.0.1:8095/api/"
  [ $((i % 7)) = 3 ] && c "http://127.0.0.1:8095/api/?key=slow$i"
  [ $((i % 9)) = 4 ] && c "http://127.0.0.1:8095/api/?key=bad$i"
  [ $((i % 25)) = 7 ] && c "${s}broken.jsp"
  [ $((i % 30)) = 11 ] && c "$s?op=order&id=$i$(for k in $(seq 1 25); do printf '&p%d=%d' "$k" "$k"; done)"
  [ $((i % 30)) = 12 ] && c -X POST --data-binary "@/usr/share/common-licenses/GPL-3" \
    -H "Content-Type: application/x-www-form-urlencoded" "$s?op=order&id=$i"
  [ $((i % 40)) = 13 ] && { printf 'GARBAGE\x01\x02 / HTTP/1.1\r\n\r\n' | timeout 3 nc -q 1 127.0.0.1 8095 >/dev/null 2>&1 || true; }
  case $i in
    30) rm -f "$w/webapps/api.war"; sleep 5 ;;
    45) cp "$w/build/legacy.war" "$w/webapps/"; sleep 5 ;;
    60) cp "$w/build/api.war" "$w/webapps/"; sleep 5 ;;
    75) rm -f "$w/webapps/legacy.war"; sleep 4 ;;
    90) touch "$w/webapps/shop.war"; sleep 6 ;;
    110) stop; sleep 2; start ;;
    130) cp "$w/build/legacy.war" "$w/webapps/"; sleep 5 ;;
  esac
done
stop
sleep 2
mkdir -p "$out/Tomcat"
cat "$w"/logs/catalina.*.log >"$out/Tomcat/Tomcat_raw.log"
rm -rf "$w"
