#!/bin/bash
# Produces Dovecot/Dovecot_raw.log: a real Dovecot 2.3 IMAP and POP3 server's own log file
# (`auth_verbose`, the `mail_log` plugin logging every mailbox event, a quota) while Python's
# imaplib and poplib log in with good, wrong and unknown credentials, create, rename and delete
# mailboxes, append, fetch, search, flag, copy, move and expunge messages past the quota, leave
# without logging out, send garbage and too many bad commands, and idle, with SASL PLAIN and
# LOGIN, from a network a user may not log in from, past the per-user connection limit and to a
# mail directory that cannot be written; doveadm kicks users
# and reloads; a clean stop and a restart. Usage: dovecot.sh OUTDIR   (IMAP 127.0.0.1:51143,
# POP3 127.0.0.1:51110)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-dovecot.XXXXXX)
chmod 755 "$w"
mkdir -p "$w/mail" "$w/run"
chown dovecot:dovecot "$w/mail"
: >"$w/users"
for u in alice bob carol dave; do
  echo "$u:{PLAIN}pw-$u::::::" >>"$w/users"
done
# erin may log in only from another network; frank's mail lives where it cannot be written
echo "erin:{PLAIN}pw-erin::::::allow_nets=10.0.0.0/8" >>"$w/users"
mkdir -p "$w/readonly"
echo "frank:{PLAIN}pw-frank::::::userdb_mail=maildir:$w/readonly/frank" >>"$w/users"
cat >"$w/dovecot.conf" <<C
protocols = imap pop3
listen = 127.0.0.1
base_dir = $w/run
log_path = $w/dovecot.log
auth_verbose = yes
auth_mechanisms = plain login
mail_max_userip_connections = 3
disable_plaintext_auth = no
ssl = no
first_valid_uid = 100
mail_location = maildir:$w/mail/%u
mail_plugins = mail_log notify quota
imap_idle_notify_interval = 2 secs
login_trusted_networks =
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $w/users
}
userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=$w/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = 51143
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    address = 127.0.0.1
    port = 51110
  }
  inet_listener pop3s {
    port = 0
  }
}
service stats {
  unix_listener stats-reader {
    mode = 0666
  }
  unix_listener stats-writer {
    mode = 0666
  }
}
plugin {
  mail_log_events = delete undelete expunge copy mailbox_delete mailbox_rename mailbox_create save flag_change
  mail_log_fields = uid box msgid size from subject flags
  quota = maildir:User quota
  quota_rule = *:storage=40k
  quota_rule2 = Trash:storage=+10k
}
protocol imap {
  mail_plugins = \$mail_plugins imap_quota
  imap_logout_format = in=%i out=%o deleted=%{deleted} expunged=%{expunged}
}
C
start() {
  dovecot -c "$w/dovecot.conf"
  for _ in $(seq 1 50); do nc -z 127.0.0.1 51143 2>/dev/null && break; sleep 0.2; done
}
start
cat >"$w/drive.py" <<'P'
import imaplib, poplib, socket, sys, time, random
rnd = random.Random(int(sys.argv[1]))
rounds = int(sys.argv[2])
users = ["alice", "bob", "carol", "dave"]
def imap():
    return imaplib.IMAP4("127.0.0.1", 51143, timeout=10)
def msg(i, size):
    return ("From: sender%d@example.org\r\nTo: x@example.org\r\nSubject: report %d\r\n"
            "Message-ID: <m%d.%d@example.org>\r\n\r\n%s\r\n" % (i, i, i, rnd.randrange(10**6),
            "x" * size)).encode()
def tryit(f):
    try:
        f()
    except Exception:
        pass
for i in range(rounds):
    u = users[i % 4]
    def session():
        c = imap()
        c.login(u, "pw-" + u)
        c.select("INBOX")
        for k in range(rnd.randrange(1, 4)):
            c.append("INBOX", "\\Seen" if k % 2 else None, None, msg(i * 10 + k, rnd.choice([200, 900, 4000, 9000])))
        c.search(None, "ALL")
        c.fetch("1:*", "(FLAGS RFC822.SIZE)")
        if i % 3 == 0:
            c.create("Archive%d" % (i % 5))
            c.copy("1", "Archive%d" % (i % 5))
        if i % 4 == 1:
            c.store("1:2", "+FLAGS", "\\Deleted")
            c.expunge()
        if i % 4 == 2:
            c.store("1", "+FLAGS", "\\Flagged")
            c.store("1", "-FLAGS", "\\Flagged")
        if i % 5 == 3:
            tryit(lambda: c.rename("Archive%d" % ((i + 2) % 5), "Old%d" % i))
            tryit(lambda: c._simple_command("MOVE", "1", "Old%d" % i))
        if i % 6 == 4:
            tryit(lambda: c.delete("Old%d" % (i - 6)))
            tryit(lambda: c.delete("Nope%d" % i))
        if i % 7 == 0:
            c.select("INBOX")
            c.store("1:*", "+FLAGS", "\\Deleted")
            c.expunge()
        if i % 9 == 5:
            c.getquotaroot("INBOX")
        if i % 8 == 6:
            c.sock.close()  # gone without a logout
            return
        c.logout()
    tryit(session)
    if i % 2 == 0:
        tryit(lambda: imap().login(u, "wrong%d" % i))
    if i % 4 == 2:
        def login_mech():
            c = imap()
            answers = iter([u.encode(), ("pw-" + u if i % 8 == 2 else "nope").encode()])
            c.authenticate("LOGIN", lambda challenge: next(answers))
            c.select("INBOX"); c.logout()
        tryit(login_mech)
    if i % 9 == 3:
        tryit(lambda: imap().login("erin", "pw-erin"))
    if i % 9 == 6:
        def frank():
            c = imap(); c.login("frank", "pw-frank"); c.select("INBOX")
            c.append("INBOX", None, None, msg(i, 100)); c.logout()
        tryit(frank)
    if i % 15 == 7:
        def crowd():
            cs = []
            for k in range(5):
                try:
                    c = imap(); c.login(u, "pw-" + u); cs.append(c)
                except Exception:
                    pass
            for c in cs:
                tryit(c.logout)
        crowd()
    if i % 3 == 1:
        tryit(lambda: imap().login("ghost%d" % (i % 7), "x"))
    if i % 4 == 3:
        def pop():
            p = poplib.POP3("127.0.0.1", 51110, timeout=10)
            p.user(u); p.pass_("pw-" + u)
            n, _ = p.stat()
            if n:
                p.retr(1)
                if i % 8 == 7:
                    p.dele(1)
            p.quit()
        tryit(pop)
    if i % 5 == 2:
        def badpop():
            p = poplib.POP3("127.0.0.1", 51110, timeout=10)
            p.user(u); p.pass_("bad")
        tryit(badpop)
    if i % 6 == 1:
        def garbage():
            s = socket.create_connection(("127.0.0.1", 51143 if i % 12 == 1 else 51110), timeout=5)
            s.recv(200)
            for k in range(12):
                s.sendall(b"GET / HTTP/1.1\r\n" if k == 0 else b"x%d bogus\r\n" % k)
            time.sleep(0.3)
            s.close()
        tryit(garbage)
    if i % 7 == 2:
        def nothing():
            s = socket.create_connection(("127.0.0.1", 51143), timeout=5)
            s.recv(200); s.close()
        tryit(nothing)
    if i % 10 == 9:
        def idle():
            c = imap(); c.login(u, "pw-" + u); c.select("INBOX")
            tag = c._new_tag()
            c.send(tag + b" IDLE\r\n"); time.sleep(3); c.send(b"DONE\r\n")
            c.readline(); c.logout()
        tryit(idle)
    time.sleep(0.05)
P
d() { timeout 300 python3 "$w/drive.py" "$@" || true; }
d 1 60
doveadm -c "$w/dovecot.conf" reload || true
sleep 1
# a user kicked while logged in
(timeout 30 python3 - <<'P' || true) &
import imaplib, time
c = imaplib.IMAP4("127.0.0.1", 51143); c.login("bob", "pw-bob"); c.select("INBOX"); time.sleep(8)
try: c.noop()
except Exception: pass
P
sleep 2
doveadm -c "$w/dovecot.conf" kick bob || true
d 2 30
doveadm -c "$w/dovecot.conf" stop || true
sleep 2
start
d 3 25
doveadm -c "$w/dovecot.conf" stop || true
sleep 2
wait || true
mkdir -p "$out/Dovecot"
cp "$w/dovecot.log" "$out/Dovecot/Dovecot_raw.log"
rm -rf "$w"
