#!/bin/bash
# Produces Vsftpd/Vsftpd_raw.log: a real vsftpd's own log file (`vsftpd_log_file`, with
# `log_ftp_protocol`: every command and reply, and each login, transfer, mkdir, delete and
# rename as OK or FAIL) while Python's ftplib logs in as local users (good, wrong and unknown
# passwords, a user on the deny list, a user without a valid shell), as anonymous, lists,
# downloads, uploads (allowed and denied), renames, deletes, makes and removes directories,
# changes permissions, sends unknown and garbage commands, idles past the session timeout,
# opens more connections than one address may, and aborts transfers; a restart in between.
# Usage: vsftpd.sh OUTDIR   (127.0.0.1:2121, passive ports 30000-30100)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-vsftpd.XXXXXX)
mkdir -p "$w/anon/pub" /var/run/vsftpd/empty
head -c 300000 /dev/urandom >"$w/anon/pub/big.bin"
echo "readme" >"$w/anon/pub/README"
chmod -R a+rX "$w/anon" && chmod 755 "$w"
for u in ftpalice ftpbob ftpcarol ftpnoshell; do
  id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
  echo "$u:${u}pw" | chpasswd
done
usermod -s /usr/sbin/nologin ftpnoshell
printf 'ftpcarol\n' >"$w/user_list"
cat >"$w/vsftpd.conf" <<C
listen=YES
listen_address=127.0.0.1
listen_port=2121
background=NO
anonymous_enable=YES
anon_root=$w/anon
anon_upload_enable=NO
local_enable=YES
write_enable=YES
local_umask=022
chmod_enable=YES
userlist_enable=YES
userlist_deny=YES
userlist_file=$w/user_list
xferlog_enable=YES
vsftpd_log_file=$w/vsftpd.log
log_ftp_protocol=YES
dual_log_enable=NO
syslog_enable=NO
pasv_enable=YES
pasv_min_port=30000
pasv_max_port=30100
max_per_ip=4
max_login_fails=2
idle_session_timeout=4
data_connection_timeout=4
deny_file={*.exe,secret*}
hide_file={.hidden*}
seccomp_sandbox=NO
secure_chroot_dir=/var/run/vsftpd/empty
pam_service_name=vsftpd
ftpd_banner=logfold test FTP
C
start() { vsftpd "$w/vsftpd.conf" & echo $! >"$w/pid"; sleep 1; }
start
python3 - <<'P'
import ftplib, io, random, socket, time
H, P = "127.0.0.1", 2121
random.seed(14)

def conn():
    f = ftplib.FTP()
    f.connect(H, P, timeout=10)
    return f

def tryit(fn, *a):
    try:
        return fn(*a)
    except (ftplib.all_errors) as e:
        return e

def session(user, pw, work):
    f = conn()
    r = tryit(f.login, user, pw)
    if isinstance(r, Exception):
        tryit(f.quit)
        return
    for w in work:
        w(f)
    tryit(f.quit)

def browse(f):
    tryit(f.pwd); tryit(f.nlst); tryit(f.retrlines, "LIST", lambda l: None)
    tryit(f.cwd, "/nonexistent"); tryit(f.size, "nosuchfile")

def upload(f):
    name = "file%d.txt" % random.randint(1, 999)
    tryit(f.storbinary, "STOR " + name, io.BytesIO(b"x" * random.randint(10, 50000)))
    tryit(f.size, name); tryit(f.sendcmd, "MDTM " + name)
    tryit(f.retrbinary, "RETR " + name, lambda b: None)
    tryit(f.rename, name, "renamed_" + name)
    tryit(f.sendcmd, "SITE CHMOD 600 renamed_" + name)
    tryit(f.delete, "renamed_" + name)
    tryit(f.delete, "missing_" + name)

def dirs(f):
    d = "dir%d" % random.randint(1, 99)
    tryit(f.mkd, d); tryit(f.mkd, d); tryit(f.cwd, d); tryit(f.cwd, ".."); tryit(f.rmd, d)
    tryit(f.rmd, "nodir")

def denied(f):
    tryit(f.storbinary, "STOR secret.txt", io.BytesIO(b"s"))
    tryit(f.storbinary, "STOR tool.exe", io.BytesIO(b"s"))
    tryit(f.retrbinary, "RETR /etc/shadow", lambda b: None)
    tryit(f.storbinary, "STOR /root/x", io.BytesIO(b"s"))

def odd(f):
    tryit(f.sendcmd, "FOOBAR x"); tryit(f.sendcmd, "SITE HELP"); tryit(f.sendcmd, "SYST")
    tryit(f.sendcmd, "FEAT"); tryit(f.sendcmd, "STAT"); tryit(f.sendcmd, "NOOP")
    tryit(f.sendcmd, "TYPE X"); tryit(f.sendcmd, "MODE Z"); tryit(f.sendcmd, "HELP")
    tryit(f.sendcmd, "PORT 1,2,3"); tryit(f.sendcmd, "REST 100")

def anon(f):
    tryit(f.cwd, "pub"); tryit(f.nlst)
    tryit(f.retrbinary, "RETR README", lambda b: None)
    tryit(f.retrbinary, "RETR big.bin", lambda b: None)
    tryit(f.storbinary, "STOR up.txt", io.BytesIO(b"u"))
    tryit(f.mkd, "anondir"); tryit(f.delete, "README")

for rnd in range(24):
    who = random.choice(["ftpalice", "ftpbob"])
    session(who, who + "pw", random.sample([browse, upload, dirs, denied, odd], 3))
    session(who, "wrong", [])
    session("nosuchuser%d" % rnd, "x", [])
    if rnd % 3 == 0:
        session("ftpcarol", "ftpcarolpw", [])
        session("ftpnoshell", "ftpnoshellpw", [browse])
        session("root", "rootpw", [])
    session("anonymous", "guest@example.test", [anon])
    if rnd % 4 == 1:
        # two wrong passwords on one connection: max_login_fails
        f = conn(); tryit(f.login, "ftpalice", "bad1"); tryit(f.login, "ftpalice", "bad2"); tryit(f.close)
    if rnd % 5 == 2:
        # more connections than one address may have
        cs = [tryit(conn) for _ in range(6)]
        for c in cs:
            if not isinstance(c, Exception):
                tryit(c.close)
    if rnd % 6 == 3:
        # garbage and a silent connection cut
        s = socket.create_connection((H, P)); s.recv(200)
        s.sendall(b"\x16\x03\x01\x00\xa5garbage\r\nUSER\r\nPASS x\r\n"); time.sleep(0.3); s.close()
        f = conn(); tryit(f.login, "ftpbob", "ftpbobpw"); f.sock.close()
    if rnd % 8 == 5:
        # idle past idle_session_timeout, and a data connection never opened
        f = conn(); tryit(f.login, "ftpbob", "ftpbobpw"); tryit(f.sendcmd, "PASV")
        time.sleep(5); tryit(f.sendcmd, "NOOP"); tryit(f.close)
    if rnd % 7 == 4:
        # an aborted download
        f = conn(); tryit(f.login, "anonymous", "a@b.test"); tryit(f.cwd, "pub")
        f.voidcmd("TYPE I"); c = f.transfercmd("RETR big.bin"); c.recv(1000); c.close()
        tryit(f.abort); tryit(f.quit)
    time.sleep(0.05)
P
kill "$(cat "$w/pid")"; sleep 1
start
python3 - <<'P'
import ftplib
f = ftplib.FTP(); f.connect("127.0.0.1", 2121, timeout=10); f.login("ftpalice", "ftpalicepw"); f.nlst(); f.quit()
P
kill "$(cat "$w/pid")"; sleep 1
mkdir -p "$out/Vsftpd"
cp "$w/vsftpd.log" "$out/Vsftpd/Vsftpd_raw.log"
rm -rf "$w"
