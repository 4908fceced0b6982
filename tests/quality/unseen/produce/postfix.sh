#!/bin/bash
# Produces Postfix/Postfix_raw.log: a real Postfix (Debian 12's 3.7) logging through a real
# rsyslogd (traditional file format, facility mail) while swaks, sendmail and nc send it mail
# that is delivered, rejected, relayed, deferred, bounced and expired, over TLS and not, with a
# reload and a restart. Usage: postfix.sh OUTDIR   (root; smtpd on 127.0.0.1:2525-2527; uses
# /etc/postfix, restored afterwards; needs /dev/log free: the script's own rsyslogd listens there)
set -eu
out=$1
[ -e /dev/log ] && { echo "/dev/log exists; stop its owner first" >&2; exit 1; }
w=$(mktemp -d /tmp/unseen-postfix.XXXXXX)
cat >"$w/rsyslog.conf" <<C
module(load="imuxsock" SysSock.Use="on" SysSock.Name="/dev/log")
global(workDirectory="$w")
mail.* action(type="omfile" file="$w/mail.log" template="RSYSLOG_TraditionalFileFormat")
C
rsyslogd -f "$w/rsyslog.conf" -i "$w/rsyslog.pid"
cp -a /etc/postfix "$w/etc-postfix.orig"
for u in alice bob carol; do id "$u" >/dev/null 2>&1 || useradd -m -s /bin/sh "$u"; done
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=mail.example.test \
  -keyout /etc/postfix/test.key -out /etc/postfix/test.crt 2>/dev/null
cat >/etc/postfix/main.cf <<C
compatibility_level = 3.6
myhostname = mail.example.test
mydomain = example.test
myorigin = example.test
mydestination = mail.example.test, example.test, localhost
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.2/32
alias_maps = hash:/etc/postfix/aliases
alias_database = hash:/etc/postfix/aliases
allow_mail_to_commands = alias
transport_maps = hash:/etc/postfix/transport
relay_domains = dead.test, reject.test, relay.test, gone.test, retry.test, slow.test
smtpd_helo_required = yes
smtpd_helo_restrictions = reject_invalid_helo_hostname, reject_non_fqdn_helo_hostname
smtpd_sender_restrictions = reject_non_fqdn_sender, check_sender_access hash:/etc/postfix/senders
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_recipient_restrictions = reject_non_fqdn_recipient, check_recipient_access hash:/etc/postfix/recipients
virtual_alias_maps = hash:/etc/postfix/virtual
header_checks = regexp:/etc/postfix/header_checks
body_checks = regexp:/etc/postfix/body_checks
message_size_limit = 20000
mailbox_size_limit = 200000
smtpd_tls_cert_file = /etc/postfix/test.crt
smtpd_tls_key_file = /etc/postfix/test.key
smtpd_tls_security_level = may
smtpd_tls_loglevel = 1
smtp_tls_security_level = may
smtp_tls_loglevel = 1
smtpd_soft_error_limit = 3
smtpd_hard_error_limit = 5
queue_run_delay = 8s
minimal_backoff_time = 8s
maximal_backoff_time = 16s
maximal_queue_lifetime = 40s
bounce_queue_lifetime = 40s
smtp_connect_timeout = 3s
delay_warning_time = 0
biff = no
readme_directory = no
C
cat >/etc/postfix/master.cf <<'C'
127.0.0.1:2525 inet n - n - - smtpd
  -o receive_override_options=no_address_mappings
127.0.0.1:2526 inet n - n - - smtpd
  -o syslog_name=postfix/strict
  -o smtpd_recipient_restrictions=check_recipient_access,regexp:/etc/postfix/strict,reject
127.0.0.1:2527 inet n - n - - smtpd
  -o syslog_name=postfix/inbound
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
virtual   unix  -       n       n       -       -       virtual
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
C
cat >/etc/postfix/aliases <<C
postmaster: root
root: alice
team: alice, bob
fails: "|/bin/false"
tempfail: "|/bin/sh -c 'exit 75'"
nouser: "|/bin/sh -c 'exit 67'"
archive: /tmp/postfix-archive-$$
C
cat >/etc/postfix/transport <<C
dead.test smtp:[127.0.0.1]:2699
reject.test smtp:[127.0.0.1]:2526
relay.test smtp:[127.0.0.1]:2527
gone.test error:5.1.2 this domain is retired
retry.test retry:4.4.1 try again later
slow.test smtp:[192.0.2.1]:25
C
cat >/etc/postfix/senders <<C
spammer.test REJECT sender not welcome
bulk.test DISCARD
hold.test HOLD
C
cat >/etc/postfix/recipients <<C
closed@example.test REJECT this mailbox is closed
later@example.test DEFER_IF_PERMIT mailbox under maintenance
C
cat >/etc/postfix/strict <<C
/^postmaster@/ OK
/./ REJECT relaying to this host is not allowed
C
cat >/etc/postfix/virtual <<C
@relay.test bob@example.test
C
cat >/etc/postfix/header_checks <<C
/^Subject:.*lottery/ REJECT no lotteries here
/^Subject:.*newsletter/ WARN newsletter
/^X-Spam-Flag: YES/ DISCARD
C
cat >/etc/postfix/body_checks <<C
/click here now/ REJECT body rejected
C
for m in transport senders recipients virtual; do postmap /etc/postfix/$m; done
postalias /etc/postfix/aliases
postfix start
sleep 2

s() { timeout 20 "$@" >/dev/null 2>&1 </dev/null || true; }
sw() { s swaks --server 127.0.0.1 --port 2525 --helo "client$((RANDOM % 9)).example.net" "$@"; }
subjects=("quarterly report" "lunch on friday" "build failed" "invoice 4411" "your lottery win"
  "weekly newsletter" "password reset" "meeting notes")
users=(alice bob carol team root postmaster)
for i in $(seq 1 44); do
  u=${users[$((i % 6))]}
  sw --from "sender$i@example.net" --to "$u@example.test" --header "Subject: ${subjects[$((i % 8))]}"
  sw --tls --from "ops@example.org" --to "bob@example.test" --header "Subject: tls $i"
  sw --from "x$i@example.net" --to "nobody$((i % 5))@example.test"
  sw --from "x$i@example.net" --to "someone@elsewhere$((i % 4)).test"
  s swaks --server 127.0.0.1 --port 2525 --local-interface 127.0.0.2 --helo trusted.example.test \
    --from "alice@example.test" --to "user$i@$(echo dead reject relay slow relay dead | cut -d' ' -f$((i % 6 + 1))).test"
  [ $((i % 3)) = 0 ] && sw --from "ads@spammer.test" --to "alice@example.test"
  [ $((i % 4)) = 0 ] && sw --from "promo@bulk.test" --to "carol@example.test"
  [ $((i % 5)) = 0 ] && sw --from "x@example.net" --to "closed@example.test"
  [ $((i % 5)) = 1 ] && sw --from "x@example.net" --to "later@example.test"
  [ $((i % 4)) = 1 ] && sw --from "x@example.net" --to "$(echo fails tempfail nouser archive | cut -d' ' -f$((i / 4 % 4 + 1)))@example.test"
  [ $((i % 6)) = 2 ] && s swaks --server 127.0.0.1 --port 2525 --helo "bad_helo!" --from a@example.net --to alice@example.test
  [ $((i % 6)) = 3 ] && s swaks --server 127.0.0.1 --port 2525 --helo localhost --from a@example.net --to alice@example.test
  [ $((i % 6)) = 4 ] && sw --from "nodomain" --to "alice@example.test"
  [ $((i % 7)) = 0 ] && sw --from "big@example.net" --to "carol@example.test" --attach "@/usr/share/common-licenses/GPL-3"
  [ $((i % 7)) = 1 ] && sw --from "x@example.net" --to "bob@example.test" --body "Hello, click here now"
  [ $((i % 7)) = 2 ] && sw --from "x@example.net" --to "alice@example.test" --add-header "X-Spam-Flag: YES"
  [ $((i % 8)) = 3 ] && sw --from "x@hold.test" --to "alice@example.test"
  [ $((i % 5)) = 2 ] && { printf 'sent by cron job %s\n' "$i" | sendmail -f "cron@example.test" "${users[$((i % 6))]}" || true; }
  [ $((i % 6)) = 1 ] && { printf 'to a retired or resting domain %s\n' "$i" | sendmail -f "alice@example.test" "user$i@$(echo gone retry | cut -d' ' -f$((i / 6 % 2 + 1))).test" || true; }
  [ $((i % 6)) = 5 ] && { printf 'GET / HTTP/1.0\r\nHost: x\r\n\r\n' | timeout 3 nc -q 2 127.0.0.1 2525 >/dev/null 2>&1 || true; }
  [ $((i % 8)) = 6 ] && { printf 'HELO a.example.net\r\nFOO\r\nBAR\r\nBAZ\r\nQUX\r\nQUUX\r\nQUIT\r\n' | timeout 4 nc -q 2 127.0.0.1 2525 >/dev/null 2>&1 || true; }
  [ $((i % 9)) = 4 ] && { (printf 'EHLO a.example.net\r\n'; sleep 1) | timeout 4 nc 127.0.0.1 2525 >/dev/null 2>&1 || true; }
  [ $((i % 9)) = 7 ] && { printf 'EHLO a.example.net\r\nMAIL FROM:<a@example.net>\r\nRCPT TO:<alice@example.test>\r\nDATA\r\n' | timeout 4 nc -q 1 127.0.0.1 2525 >/dev/null 2>&1 || true; }
  [ $((i % 12)) = 5 ] && { id=$(postqueue -j 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    print(json.loads(l)["queue_id"]); break' || true); [ -n "$id" ] && postsuper -d "$id" >/dev/null 2>&1 || true; }
  [ $((i % 12)) = 8 ] && { postsuper -r ALL >/dev/null 2>&1 || true; postqueue -f || true; }
  [ $((i % 12)) = 10 ] && postsuper -H ALL hold >/dev/null 2>&1 || true
  [ "$i" = 12 ] && postfix reload
  [ "$i" = 28 ] && { postfix stop; sleep 2; postfix start; sleep 2; }
  sleep 1
done
sleep 50
postqueue -f || true
sleep 10
postfix stop
sleep 2
kill "$(cat "$w/rsyslog.pid")"
sleep 1
rm -f /dev/log
rm -rf /etc/postfix && cp -a "$w/etc-postfix.orig" /etc/postfix
for u in alice bob carol; do userdel -r "$u" >/dev/null 2>&1 || true; rm -f /var/mail/$u; done
rm -f /tmp/postfix-archive-*
postsuper -d ALL >/dev/null 2>&1 || true
mkdir -p "$out/Postfix"
cp "$w/mail.log" "$out/Postfix/Postfix_raw.log"
rm -rf "$w"
