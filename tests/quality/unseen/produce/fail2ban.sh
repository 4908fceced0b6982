#!/bin/bash
# Produces Fail2ban/Fail2ban_raw.log: a real fail2ban 1.0.2 server's own log file (loglevel
# INFO) while it watches a real sshd's log (-E) and a real nginx's error and access logs and
# clients fail to log in, probe for scripts and exceed a request rate from many loopback
# addresses; fail2ban-client bans, unbans, reloads, stops and starts jails, sends bad commands;
# actions that work (dummy) and that fail (no iptables here); a restart restores bans from its
# database. Usage: fail2ban.sh OUTDIR   (root; sshd on 127.0.0.1:52298, nginx on :52297)
set -u
out=$1
w=$(mktemp -d /tmp/unseen-f2b.XXXXXX)
chmod 755 "$w"
cp -r /etc/fail2ban "$w/etc"
rm -f "$w/etc/jail.d/"*
cat >"$w/etc/fail2ban.local" <<C
[Definition]
loglevel = INFO
logtarget = $w/fail2ban.log
socket = $w/f2b.sock
pidfile = $w/f2b.pid
dbfile = $w/f2b.sqlite3
C
cat >"$w/etc/jail.local" <<C
[DEFAULT]
ignoreip = 127.0.0.1 127.0.0.200/29
backend = polling
findtime = 10m
bantime = 30
maxretry = 3
banaction = dummy
bantime.increment = true

[sshd]
enabled = true
port = 52298
logpath = $w/sshd.log
datepattern = {NONE}
action = dummy[name=sshd]
         iptables-multiport[name=sshd, port=52298]

[nginx-http-auth]
enabled = true
port = 52297
logpath = $w/nginx/error.log
maxretry = 2

[nginx-limit-req]
enabled = true
port = 52297
logpath = $w/nginx/error.log
maxretry = 5

[nginx-botsearch]
enabled = true
port = 52297
logpath = $w/nginx/access.log
maxretry = 4
action = dummy[name=botsearch]
         hostsdeny[file=$w/hosts.deny]

[recidive]
enabled = true
logpath = $w/fail2ban.log
bantime = 300
findtime = 1h
maxretry = 3

[postfix]
enabled = false
logpath = $w/mail.log
C
touch "$w/hosts.deny" "$w/fail2ban.log"

# sshd writing its own log file
ssh-keygen -q -t ed25519 -N '' -f "$w/host_ed25519"
id f2buser >/dev/null 2>&1 || useradd -m -s /bin/sh f2buser
echo "f2buser:pw-f2b" | chpasswd
mkdir -p /run/sshd
cat >"$w/sshd_config" <<C
Port 52298
ListenAddress 127.0.0.1
HostKey $w/host_ed25519
LogLevel VERBOSE
UsePAM yes
MaxAuthTries 3
PidFile $w/sshd.pid
C
/usr/sbin/sshd -f "$w/sshd_config" -E "$w/sshd.log"

# nginx with basic auth, a request-rate limit and its own logs
mkdir -p "$w/nginx/html/admin" "$w/nginx/tmp"
echo ok >"$w/nginx/html/index.html"
echo "admin:$(openssl passwd -apr1 pw-admin)" >"$w/nginx/htpasswd"
cat >"$w/nginx/nginx.conf" <<C
worker_processes 1;
pid $w/nginx/nginx.pid;
error_log $w/nginx/error.log info;
events { worker_connections 64; }
http {
  access_log $w/nginx/access.log combined;
  client_body_temp_path $w/nginx/tmp;
  limit_req_zone \$binary_remote_addr zone=one:1m rate=2r/s;
  server {
    listen 127.0.0.1:52297;
    root $w/nginx/html;
    location /admin/ { auth_basic "admin"; auth_basic_user_file $w/nginx/htpasswd; }
    location /api/ { limit_req zone=one; try_files /index.html =404; }
  }
}
C
nginx -c "$w/nginx/nginx.conf"
sleep 1

c() { timeout 20 fail2ban-client -c "$w/etc" "$@" >/dev/null 2>&1 || true; }
c -x start
sleep 3

so=(-p 52298 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=3
    -o LogLevel=QUIET -o PubkeyAuthentication=no)
ssh_bad() { timeout 12 sshpass -p "$2" ssh "${so[@]}" -b "$1" -o NumberOfPasswordPrompts=${4:-1} \
  "$3@127.0.0.1" true >/dev/null 2>&1 </dev/null || true; }
cu() { timeout 5 curl -s -o /dev/null --interface "$1" "${@:2}" || true; }

round() {
  local r=$1
  for i in $(seq 2 9); do
    a=127.0.0.$((r % 4 * 10 + i))
    case $((i % 4)) in
      0) ssh_bad "$a" wrong "f2buser" $((r % 3 + 1)) ;;
      1) ssh_bad "$a" x "ghost$i" $((r % 2 + 1)) ;;
      2) cu "$a" -u admin:wrong$i "http://127.0.0.1:52297/admin/" ;
         cu "$a" -u nobody$i:x "http://127.0.0.1:52297/admin/" ;;
      3) for p in /wp-login.php /phpmyadmin/index.php /admin.php /cgi-bin/test.cgi /index.html; do
           cu "$a" "http://127.0.0.1:52297$p"; done ;;
    esac
    [ $((i % 3)) = 0 ] && for k in $(seq 1 12); do cu "$a" "http://127.0.0.1:52297/api/x$k"; done
  done
  # an ignored address and the good login
  ssh_bad 127.0.0.201 wrong f2buser
  ssh_bad 127.0.0.1 wrong f2buser
  timeout 8 sshpass -p pw-f2b ssh "${so[@]}" f2buser@127.0.0.1 true >/dev/null 2>&1 </dev/null || true
  cu 127.0.0.202 -u admin:bad "http://127.0.0.1:52297/admin/"
  cu 127.0.0.1 -u admin:pw-admin "http://127.0.0.1:52297/admin/"
  sleep 2
}

for r in 1 2 3; do round "$r"; done
c status
c status sshd
c set sshd banip 10.0.0.5 10.0.0.6
c set sshd banip 10.0.0.5
c set sshd unbanip 10.0.0.6
c set sshd unbanip 10.9.9.9
c set nginx-http-auth banip 192.0.2.44
c set sshd addignoreip 127.0.0.240
c set sshd delignoreip 127.0.0.240
c set sshd bantime 45
c set sshd maxretry 2
c set sshd findtime 300
c set nojail banip 10.0.0.7
c set sshd frobnicate 1
c get sshd banned
c banned
c set loglevel NOTICE
c set loglevel INFO
c flushlogs
sleep 2
for r in 4 5; do round "$r"; done
c reload sshd
c reload
sleep 3
c unban 127.0.0.12
c unban --all
c stop nginx-botsearch
sleep 2
round 6
c reload --restart nginx-http-auth
sleep 2
# bans expire while the jails run
sleep 35
round 7
c add testjail polling
c set testjail addlogpath "$w/nginx/error.log"
c set testjail addfailregex 'no such regex here <HOST>'
c start testjail
c stop testjail
c stop
sleep 3
# a restart: bans come back from the database
c -x start
sleep 4
round 8
round 9
c set recidive banip 127.0.0.33
c stop
sleep 3

kill "$(cat "$w/sshd.pid")"
nginx -c "$w/nginx/nginx.conf" -s stop
sleep 1
userdel -r f2buser >/dev/null 2>&1 || true
mkdir -p "$out/Fail2ban"
cat "$w/fail2ban.log" >"$out/Fail2ban/Fail2ban_raw.log"
rm -rf "$w"
