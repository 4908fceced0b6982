#!/bin/bash
# Produces ApacheError/ApacheError_raw.log and ApacheAccess/ApacheAccess_raw.log: a real Apache
# httpd 2.4's error log (LogLevel info, mod_auth_basic/mod_proxy at debug) and its access log
# (`combined`) while curl requests static files, missing and forbidden
# paths, password-protected pages with good, wrong and unknown users, a dead proxy backend,
# CGI scripts that fail, bad requests; graceful restarts and a stop.
# Usage: apache.sh OUTDIR   (as root; listens on 127.0.0.1:58081)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-apache.XXXXXX)
chmod 755 "$w"
mkdir -p "$out/ApacheError" "$out/ApacheAccess" "$w/htdocs/files" "$w/htdocs/secret" "$w/htdocs/private" "$w/cgi" "$w/run"
for i in $(seq 1 20); do echo "file $i" >"$w/htdocs/files/f$i.txt"; done
echo ok >"$w/htdocs/index.html"
echo hidden >"$w/htdocs/private/p.txt"; chmod 000 "$w/htdocs/private/p.txt"
echo top >"$w/htdocs/secret/s.txt"
printf '#!/bin/sh\necho "Content-Type: text/plain"\necho\necho hello\n' >"$w/cgi/ok.sh"
printf '#!/bin/sh\necho "oops from script" >&2\nexit 1\n' >"$w/cgi/fail.sh"
printf '#!/bin/sh\necho "not a header"\n' >"$w/cgi/badhdr.sh"
chmod 755 "$w/cgi/"*.sh
htpasswd -cb "$w/htpasswd" alice s3cret >/dev/null 2>&1
htpasswd -b "$w/htpasswd" bob hunter2 >/dev/null 2>&1
m=/usr/lib/apache2/modules
cat >"$w/httpd.conf" <<CONF
ServerRoot $w
ServerName unseen.local
Listen 127.0.0.1:58081
PidFile $w/run/httpd.pid
DefaultRuntimeDir $w/run
User www-data
Group www-data
LoadModule mpm_event_module $m/mod_mpm_event.so
LoadModule authz_core_module $m/mod_authz_core.so
LoadModule authz_host_module $m/mod_authz_host.so
LoadModule authz_user_module $m/mod_authz_user.so
LoadModule authn_core_module $m/mod_authn_core.so
LoadModule authn_file_module $m/mod_authn_file.so
LoadModule auth_basic_module $m/mod_auth_basic.so
LoadModule dir_module $m/mod_dir.so
LoadModule mime_module $m/mod_mime.so
LoadModule alias_module $m/mod_alias.so
LoadModule cgid_module $m/mod_cgid.so
LoadModule proxy_module $m/mod_proxy.so
LoadModule proxy_http_module $m/mod_proxy_http.so
LoadModule status_module $m/mod_status.so
LoadModule reqtimeout_module $m/mod_reqtimeout.so
TypesConfig /etc/mime.types
ErrorLog $out/ApacheError/ApacheError_raw.log
LogLevel info auth_basic:debug proxy:debug proxy_http:debug
LogFormat "%h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\"" combined
CustomLog $out/ApacheAccess/ApacheAccess_raw.log combined
DocumentRoot $w/htdocs
DirectoryIndex index.html
StartServers 1
ServerLimit 2
ThreadsPerChild 8
MaxRequestWorkers 16
RequestReadTimeout header=2 body=2
<Directory $w/htdocs>
  Require all granted
</Directory>
<Directory $w/htdocs/secret>
  AuthType Basic
  AuthName "secret"
  AuthUserFile $w/htpasswd
  Require user alice
</Directory>
<Location /denied>
  Require all denied
</Location>
<Location /server-status>
  SetHandler server-status
  Require ip 10.0.0.1
</Location>
ScriptAlias /cgi-bin/ $w/cgi/
<Directory $w/cgi>
  Require all granted
</Directory>
ProxyPass /api http://127.0.0.1:58099/
ProxyTimeout 2
CONF
: >"$out/ApacheError/ApacheError_raw.log"; : >"$out/ApacheAccess/ApacheAccess_raw.log"
u=http://127.0.0.1:58081
c() { curl -s -m 4 -o /dev/null "$@" || true; }
apache2 -f "$w/httpd.conf" -k start
for _ in $(seq 1 50); do curl -fs $u/ >/dev/null 2>&1 && break; sleep 0.1; done
for round in 1 2 3; do
  for i in $(seq 1 40); do
    c $u/files/f$((i % 20 + 1)).txt
    c $u/files/missing$i.txt
    [ $((i % 3)) = 2 ] && c -I -A "Mozilla/5.0 (X11; Linux x86_64) probe/$i" $u/files/f$((i % 7 + 1)).txt
    [ $((i % 6)) = 1 ] && c -X POST -d "a=$i" -e "http://unseen.local/form$i" $u/cgi-bin/ok.sh
    [ $((i % 7)) = 3 ] && c -X PUT -d "x" $u/files/f1.txt
    [ $((i % 8)) = 5 ] && c -X DELETE -A "cleanup-bot/1.$i" $u/files/f2.txt
    [ $((i % 9)) = 4 ] && c -X OPTIONS $u/
    [ $((i % 2)) = 0 ] && c $u/private/p.txt
    [ $((i % 3)) = 0 ] && c -u alice:s3cret $u/secret/s.txt
    [ $((i % 3)) = 1 ] && c -u alice:wrong$i $u/secret/s.txt
    [ $((i % 5)) = 0 ] && c -u mallory$i:x $u/secret/s.txt
    [ $((i % 5)) = 2 ] && c -u bob:hunter2 $u/secret/s.txt
    [ $((i % 7)) = 0 ] && c $u/secret/s.txt
    [ $((i % 4)) = 0 ] && c $u/denied/x$i
    [ $((i % 6)) = 0 ] && c $u/server-status
    [ $((i % 4)) = 1 ] && c $u/api/items/$i
    [ $((i % 5)) = 3 ] && c $u/cgi-bin/ok.sh
    [ $((i % 5)) = 4 ] && c $u/cgi-bin/fail.sh
    [ $((i % 8)) = 0 ] && c $u/cgi-bin/badhdr.sh
    [ $((i % 9)) = 0 ] && c $u/cgi-bin/nothere.sh
    [ $((i % 10)) = 0 ] && c "$u/../../etc/passwd" --path-as-is
    [ $((i % 11)) = 0 ] && (printf 'GARBAGE\r\n\r\n' | nc -q2 127.0.0.1 58081 >/dev/null 2>&1 || true)
    [ $((i % 13)) = 0 ] && (printf 'GET / HTTP/1.1\r\n' | nc -q3 127.0.0.1 58081 >/dev/null 2>&1 || true)
  done
  apache2 -f "$w/httpd.conf" -k graceful
  sleep 2
done
apache2 -f "$w/httpd.conf" -k stop
sleep 2
rm -rf "$w"
