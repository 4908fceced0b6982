#!/bin/bash
# Produces DebianSyslog/DebianSyslog_raw.log: an operating system's own syslog — Debian 12's
# sudo, su, runuser, cron, atd, shadow's user and group tools (useradd, usermod, userdel,
# groupadd, groupmod, gpasswd, chpasswd, passwd, chage, chfn, chsh) and PAM, through a real
# rsyslogd 8.2302 (traditional file format, every facility) — while accounts are created,
# changed, locked and removed, people use sudo and su with right and wrong passwords and
# commands they may and may not run, and cron and at run jobs. Usage: debian_syslog.sh OUTDIR
# [MINUTES]   (root; needs /dev/log free: its own rsyslogd listens there meanwhile; MINUTES of
# cron, default 6; apt-get install sudo cron at)
set -eu
out=$1
minutes=${2:-6}
here=$(cd "$(dirname "$0")" && pwd)
cd /
[ -e /dev/log ] && { echo "/dev/log exists; stop its owner first" >&2; exit 1; }
w=$(mktemp -d /tmp/unseen-linux.XXXXXX)
cat >"$w/rsyslog.conf" <<C
module(load="imuxsock" SysSock.Use="on" SysSock.Name="/dev/log")
global(workDirectory="$w")
*.* action(type="omfile" file="$w/syslog" template="RSYSLOG_TraditionalFileFormat")
C
rsyslogd -f "$w/rsyslog.conf" -i "$w/rsyslog.pid"
sleep 0.5
users=(alice bob carol dave)
q() { "$@" >/dev/null 2>&1 </dev/null || true; }
qi() { "$@" >/dev/null 2>&1 || true; }  # keeps stdin
pty() { q timeout 20 python3 "$here/pty_login.py" "$@"; }
groupadd -f ops
for u in "${users[@]}"; do
  q userdel -r "$u"
  useradd -m -s /bin/bash -c "$u lab user" "$u"
  echo "$u:pw-$u" | chpasswd
done
q usermod -aG ops alice
q gpasswd -a carol ops
cat >/etc/sudoers.d/unseen-lab <<S
alice ALL=(ALL) ALL
carol ALL=(root) /usr/bin/id, /bin/true
%ops ALL=(root) NOPASSWD: /usr/bin/uptime
S
chmod 440 /etc/sudoers.d/unseen-lab
cat >/etc/cron.d/unseen-lab <<C
* * * * * root /bin/true
* * * * * alice /usr/bin/id >/dev/null
*/2 * * * * bob /bin/sh -c 'exit 3'
* * * * * carol /usr/bin/nonexistent-job
C
printf '* * * * * date >/dev/null\n' | crontab -u dave -
cron
atd
RANDOM=5
for i in $(seq 1 40); do
  u=${users[$((RANDOM % 4))]}
  # sudo (password on stdin: su -c gives no terminal): allowed, wrong password, a command not
  # allowed, a user not in sudoers, NOPASSWD, another target user
  sudo_as() { local who=$1 pw=$2; shift 2; printf '%s\n%s\n%s\n' "$pw" "$pw" "$pw" | qi su -s /bin/sh "$who" -c "sudo -k; sudo -S -p '' $*"; }
  sudo_as alice pw-alice /usr/bin/id
  [ $((i % 3)) = 0 ] && sudo_as alice "wrong$i" /bin/ls /root
  [ $((i % 4)) = 0 ] && sudo_as carol pw-carol /bin/cat /etc/shadow
  [ $((i % 5)) = 0 ] && sudo_as bob pw-bob /usr/bin/id
  [ $((i % 4)) = 1 ] && q su -s /bin/sh alice -c "sudo -n /usr/bin/uptime"
  [ $((i % 6)) = 0 ] && sudo_as carol pw-carol -u alice /bin/true
  [ $((i % 7)) = 3 ] && sudo_as dave pw-dave -l
  # su: from root, and between users with right and wrong passwords
  q su -s /bin/sh "$u" -c true
  [ $((i % 2)) = 0 ] && pty "pw-bob" su -s /bin/sh alice -c "su -s /bin/sh bob -c true"
  [ $((i % 3)) = 1 ] && pty "nope$i" su -s /bin/sh dave -c "su -s /bin/sh carol -c true"
  [ $((i % 7)) = 0 ] && pty "pw-root" su -s /bin/sh bob -c "su - root -c true"
  [ $((i % 9)) = 4 ] && { q su nosuchuser -c true; q runuser -u "$u" -- true; }
  [ $((i % 10)) = 5 ] && { q chfn -f "User $i" "$u"; q chsh -s /bin/sh "$u"; q chsh -s /bin/bash "$u"; }
  # accounts
  [ $((i % 5)) = 0 ] && { n="tmp$i"; q useradd -m -G ops "$n"; echo "$n:x$i" | qi chpasswd; q usermod -s /bin/sh "$n"; \
    q passwd -l "$n"; q passwd -u "$n"; q chage -M 90 -W 7 "$n"; q usermod -L "$n"; q userdel -r "$n"; }
  [ $((i % 8)) = 0 ] && { q groupadd "grp$i"; q gpasswd -a bob "grp$i"; q gpasswd -d bob "grp$i"; q groupmod -n "team$i" "grp$i"; q groupdel "team$i"; }
  [ $((i % 9)) = 0 ] && { q useradd alice; q groupadd ops; q userdel nosuchuser$i; q usermod -G nosuchgroup bob; }
  [ $((i % 6)) = 3 ] && { echo "$u:pw-$u" | qi chpasswd; pty "pw-$u" su -s /bin/sh "$u" -c "passwd"; }
  [ $((i % 10)) = 0 ] && { echo "/bin/true" | qi su -s /bin/sh alice -c "at now"; echo "exit 1" | qi at now + 1 minute; }
  [ $((i % 11)) = 0 ] && { printf '*/2 * * * * true\n' | qi crontab -u bob -; q crontab -u bob -r; q crontab -l -u carol; }
  sleep 1
done
# let cron and at run a few rounds
end=$(($(date +%s) + minutes * 60))
while [ "$(date +%s)" -lt "$end" ]; do
  sudo_as alice pw-alice /bin/true
  q su -s /bin/sh bob -c "sudo -n /usr/bin/uptime"
  sleep 10
done
kill "$(cat /run/crond.pid)" "$(cat /run/atd.pid)" 2>/dev/null || true
rm -f /etc/sudoers.d/unseen-lab /etc/cron.d/unseen-lab
for u in "${users[@]}"; do q crontab -u "$u" -r; q userdel -r "$u"; done
q groupdel ops
sleep 1
kill "$(cat "$w/rsyslog.pid")"
sleep 1
rm -f /dev/log
mkdir -p "$out/DebianSyslog"
cp "$w/syslog" "$out/DebianSyslog/DebianSyslog_raw.log"
rm -rf "$w"
