#!/bin/bash
# Produces Cups/Cups_raw.log: CUPS 2.4's cupsd error_log at `LogLevel debug` (Debian 12, cups
# and cups-filters), a desktop's print service, while lp, lpadmin, lpstat, cancel, lpmove and
# cupsenable/cupsdisable add, change and delete queues and print text, PDF and PostScript
# jobs to a file queue with a PDF driver (filters that work and fail on a broken PDF), to an IPP
# queue on the same server, to a socket printer that is up and then down, and to IPP and LPD
# printers nobody listens on; jobs are held, released, moved and cancelled, queues stopped and
# rejecting, an unprivileged user tries to administer, unknown queues are asked for, and cupsd
# reloads (SIGHUP) and restarts.  Usage: cups.sh OUTDIR   (root; loopback ports 6631 and 9101
# and a local socket;
# apt-get install cups cups-client cups-bsd cups-filters netcat-openbsd)
set -eu
out=$1
cd /
w=$(mktemp -d /tmp/unseen-cups.XXXXXX)
chmod 755 "$w"
mkdir -p "$w"/{etc/ppd,spool/tmp,cache,state,out,docs}
chmod 1777 "$w/out"
port=6631
cat >"$w/etc/cupsd.conf" <<C
LogLevel debug
MaxLogSize 0
Listen 127.0.0.1:$port
Listen $w/cups.sock
Browsing Off
DefaultAuthType Basic
WebInterface No
JobRetryInterval 5
JobRetryLimit 2
<Location />
  Order allow,deny
  Allow localhost
</Location>
<Location /admin>
  Order allow,deny
  Allow localhost
</Location>
<Policy default>
  <Limit Send-Document Send-URI Hold-Job Release-Job Restart-Job Purge-Jobs Set-Job-Attributes Create-Job-Subscription Renew-Subscription Cancel-Subscription Get-Notifications Reprocess-Job Cancel-Current-Job Suspend-Current-Job Resume-Job Cancel-My-Jobs Close-Job CUPS-Move-Job CUPS-Get-Document>
    Require user @OWNER @SYSTEM
    Order deny,allow
  </Limit>
  <Limit CUPS-Add-Modify-Printer CUPS-Delete-Printer CUPS-Add-Modify-Class CUPS-Delete-Class CUPS-Set-Default Pause-Printer Resume-Printer Enable-Printer Disable-Printer Hold-New-Jobs Release-Held-New-Jobs CUPS-Accept-Jobs CUPS-Reject-Jobs>
    AuthType Default
    Require user @SYSTEM
    Order deny,allow
  </Limit>
  <Limit Cancel-Job CUPS-Authenticate-Job>
    Require user @OWNER @SYSTEM
    Order deny,allow
  </Limit>
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>
C
cat >"$w/etc/cups-files.conf" <<C
ServerRoot $w/etc
RequestRoot $w/spool
TempDir $w/spool/tmp
CacheDir $w/cache
StateDir $w/state
ErrorLog $w/error_log
AccessLog $w/access_log
PageLog $w/page_log
FileDevice Yes
SystemGroup root
User lp
Group lp
C
start() { cupsd -f -c "$w/etc/cupsd.conf" -s "$w/etc/cups-files.conf" </dev/null >/dev/null 2>&1 & echo $! >"$w/cupsd.pid"
  for k in $(seq 1 50); do lpstat -h "$w/cups.sock" -r >/dev/null 2>&1 && break; sleep 0.2; done; }
stop() {
  local pid st k
  pid=$(cat "$w/cupsd.pid"); kill "$pid" 2>/dev/null || true
  for k in $(seq 1 50); do st=$(ps -o stat= -p "$pid" || true); case "$st" in "" | Z*) break ;; esac; sleep 0.2; done
}
start
# the clients talk over the local socket (root is known by its peer credentials there)
export CUPS_SERVER=$w/cups.sock
q() { timeout 20 "$@" >/dev/null 2>&1 </dev/null || true; }
ppd=/usr/share/ppd/cupsfilters/Generic-PDF_Printer-PDF.ppd
q lpadmin -p office -E -v "file://$w/out/office.pdf" -P "$ppd" -D "Office PDF" -L "Room 1"
q lpadmin -p loop -E -v "ipp://127.0.0.1:$port/printers/office" -m everywhere
q lpadmin -p loop -E -v "ipp://127.0.0.1:$port/printers/office" -P "$ppd"
q lpadmin -p sock -E -v "socket://127.0.0.1:9101" -P "$ppd"
q lpadmin -p deadipp -E -v "ipp://127.0.0.1:9/printers/none" -P "$ppd"
q lpadmin -p deadlpd -E -v "lpd://127.0.0.1:9/queue" -P "$ppd"
q lpadmin -d office
made=
id printuser >/dev/null 2>&1 || { useradd -M -s /bin/sh printuser; made=printuser; }
# documents: text, PostScript, a good PDF (made by the office queue itself), a broken PDF
for i in 1 2 3; do seq 1 $((i * 40)) | sed "s/^/line /" >"$w/docs/text$i.txt"; done
printf '%%!PS\n/Helvetica findfont 20 scalefont setfont 72 700 moveto (Hello) show showpage\n' >"$w/docs/hello.ps"
printf '%%PDF-1.4\n1 0 obj << /Type /Catalog >>\nthis is not a pdf\n%%%%EOF\n' >"$w/docs/broken.pdf"
head -c 5000 /dev/urandom >"$w/docs/random.bin"
chmod 644 "$w"/docs/*
sockup() { (timeout 15 nc -l 127.0.0.1 9101 >/dev/null 2>&1 &) ; }
RANDOM=11
for i in $(seq 1 ${ROUNDS:-16}); do
  q lp -d office -t "report $i" "$w/docs/text$((i % 3 + 1)).txt"
  [ $((i % 2)) = 0 ] && q lp -d office -n 2 -o number-up=2 -o sides=two-sided-long-edge "$w/docs/hello.ps"
  [ $((i % 3)) = 0 ] && q lp -d office "$w/docs/broken.pdf"
  [ $((i % 3)) = 1 ] && q lp -d loop -t "via ipp $i" "$w/docs/text1.txt"
  [ $((i % 4)) = 0 ] && { sockup; sleep 0.3; q lp -d sock "$w/docs/text2.txt"; }
  [ $((i % 4)) = 2 ] && q lp -d sock "$w/docs/hello.ps"
  [ $((i % 5)) = 0 ] && q lp -d deadipp "$w/docs/text1.txt"
  [ $((i % 5)) = 2 ] && q lp -d deadlpd "$w/docs/text1.txt"
  [ $((i % 4)) = 1 ] && q su -s /bin/sh printuser -c "lp -d office -H hold $w/docs/text3.txt"
  [ $((i % 4)) = 3 ] && { j=$(lpstat -o office 2>/dev/null | awk 'NR==1{print $1}' | sed 's/.*-//'); [ -n "$j" ] && q lp -i "$j" -H resume; }
  [ $((i % 3)) = 2 ] && q su -s /bin/sh printuser -c "lpadmin -p office -D hacked"
  [ $((i % 3)) = 2 ] && q su -s /bin/sh printuser -c "cancel -a deadipp"
  [ $((i % 5)) = 3 ] && q lp -d nosuchqueue$i "$w/docs/text1.txt"
  [ $((i % 5)) = 4 ] && q lp -d office "$w/docs/random.bin"
  [ $((i % 6)) = 0 ] && { q cupsdisable -r "paused $i" office; q lp -d office "$w/docs/text1.txt"; q cupsenable office; }
  [ $((i % 6)) = 3 ] && { q cupsreject -r "closed $i" loop; q lp -d loop "$w/docs/text1.txt"; q cupsaccept loop; }
  [ $((i % 7)) = 0 ] && { j=$(lpstat -o deadipp 2>/dev/null | awk 'NR==1{print $1}'); [ -n "$j" ] && q lpmove "$j" office; }
  [ $((i % 7)) = 4 ] && q cancel -a deadlpd
  [ $((i % 4)) = 2 ] && { q lpstat -t; q lpstat -W completed -o; q lpoptions -p office -l; }
  [ $((i % 8)) = 5 ] && { q lpadmin -p temp$i -E -v "file:///dev/null" -P "$ppd"; q lp -d temp$i "$w/docs/text1.txt"; sleep 1; q lpadmin -x temp$i; }
  [ $((i % 8)) = 7 ] && q lpadmin -p office -o media-default=a4 -o sides-default=one-sided
  [ "$i" = 6 ] && kill -HUP "$(cat "$w/cupsd.pid")"
  [ "$i" = 11 ] && { stop; start; }
  sleep 1.5
done
sleep 10
q cancel -a
stop
mkdir -p "$out/Cups"
cp "$w/error_log" "$out/Cups/Cups_raw.log"
[ -n "$made" ] && userdel "$made" 2>/dev/null || true
rm -rf "$w"
