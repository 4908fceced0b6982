#!/bin/bash
# Produces Sshd/Sshd_raw.log: a real OpenSSH sshd (LogLevel VERBOSE) logging through a real
# rsyslogd (traditional file format) while ssh clients log in with good and bad passwords and
# keys, as unknown users, and probe it with garbage. Usage: sshd.sh OUTDIR   (root; sshd on
# 127.0.0.1:52222; needs /dev/log free: the script's own rsyslogd listens there meanwhile)
set -eu
out=$1
[ -e /dev/log ] && { echo "/dev/log exists; stop its owner first" >&2; exit 1; }
w=$(mktemp -d /tmp/unseen-sshd.XXXXXX)
cat >"$w/rsyslog.conf" <<C
module(load="imuxsock" SysSock.Use="on" SysSock.Name="/dev/log")
global(workDirectory="$w")
auth,authpriv.* action(type="omfile" file="$w/auth.log" template="RSYSLOG_TraditionalFileFormat")
C
rsyslogd -f "$w/rsyslog.conf" -i "$w/rsyslog.pid"
ssh-keygen -q -t ed25519 -N '' -f "$w/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$w/client_key"
ssh-keygen -q -t ed25519 -N '' -f "$w/other_key"
for u in alice deploy; do
  id "$u" >/dev/null 2>&1 || useradd -m -s /bin/sh "$u"
  echo "$u:pw-$u" | chpasswd
done
mkdir -p ~deploy/.ssh && cp "$w/client_key.pub" ~deploy/.ssh/authorized_keys
chown -R deploy ~deploy/.ssh && chmod 700 ~deploy/.ssh
mkdir -p /run/sshd
cat >"$w/sshd_config" <<C
Port 52222
ListenAddress 127.0.0.1
HostKey $w/host_ed25519
LogLevel VERBOSE
PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM yes
MaxAuthTries 3
PidFile $w/sshd.pid
C
/usr/sbin/sshd -f "$w/sshd_config"
o=(-p 52222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=3 -o LogLevel=QUIET)
s() { timeout 10 "$@" >/dev/null 2>&1 </dev/null || true; }
for i in $(seq 1 40); do
  s sshpass -p pw-alice ssh "${o[@]}" -o PubkeyAuthentication=no alice@127.0.0.1 "echo $i"
  s sshpass -p wrong$i ssh "${o[@]}" -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1 alice@127.0.0.1 true
  s sshpass -p x ssh "${o[@]}" -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=$((i % 3 + 1)) "guest$((i % 7))@127.0.0.1" true
  s ssh "${o[@]}" -i "$w/client_key" -o BatchMode=yes deploy@127.0.0.1 "true"
  [ $((i % 2)) = 0 ] && s ssh "${o[@]}" -i "$w/other_key" -o BatchMode=yes -o PasswordAuthentication=no deploy@127.0.0.1 true
  [ $((i % 3)) = 0 ] && s ssh "${o[@]}" -i "$w/client_key" -o BatchMode=yes root@127.0.0.1 true
  [ $((i % 4)) = 0 ] && { printf 'GET / HTTP/1.1\r\n\r\n' | timeout 3 nc -q 1 127.0.0.1 52222 >/dev/null 2>&1 || true; }
  [ $((i % 5)) = 0 ] && { timeout 2 nc 127.0.0.1 52222 </dev/null >/dev/null 2>&1 || true; }
  [ $((i % 6)) = 0 ] && s sshpass -p pw-deploy ssh "${o[@]}" -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=4 deploy@127.0.0.1 "exit $((i % 3))"
  [ $((i % 8)) = 0 ] && s ssh "${o[@]}" -o KexAlgorithms=diffie-hellman-group1-sha1 alice@127.0.0.1 true
done
kill "$(cat "$w/sshd.pid")"
sleep 1
kill "$(cat "$w/rsyslog.pid")"
sleep 1
rm -f /dev/log
for u in alice deploy; do userdel -r "$u" >/dev/null 2>&1 || true; done
mkdir -p "$out/Sshd"
cp "$w/auth.log" "$out/Sshd/Sshd_raw.log"
rm -rf "$w"
