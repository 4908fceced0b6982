#!/bin/bash
# Produces Samba/Samba_raw.log: Samba 4.17's smbd log (Debian 12, `log level = 3`, one line
# per message: `debug prefix timestamp`, `debug pid`) while smbclient, rpcclient and smbcacls
# log in with right and wrong passwords, as unknown users and as guests, list, read, write,
# rename and delete files on shares that allow it and shares that do not, ask for shares and
# files that do not exist, try SMB1 against a server that refuses it; smbcontrol reloads the
# configuration, a share's directory disappears, and smbd is restarted.
# Usage: samba.sh OUTDIR   (root; loopback port 4445; apt-get install samba smbclient)
set -eu
out=$1
cd /
w=$(mktemp -d /tmp/unseen-samba.XXXXXX)
chmod 755 "$w"
mkdir -p "$w"/{private,lock,state,cache,pid,ncalrpc} "$w"/share/{public,team,readonly,drop}
port=4445
conf=$w/smb.conf
write_conf() {
  cat >"$conf" <<C
[global]
  workgroup = LAB
  netbios name = LABSRV
  server role = standalone server
  security = user
  map to guest = Bad User
  smb ports = $port
  interfaces = lo
  bind interfaces only = yes
  disable netbios = yes
  private dir = $w/private
  lock directory = $w/lock
  state directory = $w/state
  cache directory = $w/cache
  pid directory = $w/pid
  ncalrpc dir = $w/ncalrpc
  passdb backend = tdbsam:$w/private/passdb.tdb
  log file = $w/log.smbd
  max log size = 0
  log level = ${1:-3}
  debug prefix timestamp = yes
  debug pid = yes
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
  server min protocol = SMB2_02
[public]
  path = $w/share/public
  guest ok = yes
  read only = no
  force user = nobody
[team]
  path = $w/share/team
  valid users = alice bob
  read only = no
[readonly]
  path = $w/share/readonly
  read only = yes
  guest ok = yes
[drop]
  path = $w/share/drop
  valid users = alice
  write list = alice
  read only = yes
[gone]
  path = $w/share/gone
  guest ok = yes
C
}
write_conf 3
made=()
for u in alice bob carol; do
  id "$u" >/dev/null 2>&1 || { useradd -M -s /usr/sbin/nologin "$u"; made+=("$u"); }
  printf 'pw-%s\npw-%s\n' "$u" "$u" | smbpasswd -c "$conf" -s -a "$u" >/dev/null
done
smbpasswd -c "$conf" -d carol >/dev/null
chown alice:alice "$w/share/team" "$w/share/drop"; chmod 777 "$w/share/team" "$w/share/public"
for i in 1 2 3 4 5; do head -c $((i * 3000)) /dev/urandom >"$w/share/readonly/data$i.bin"; done
echo secret >"$w/share/readonly/locked.txt"; chmod 600 "$w/share/readonly/locked.txt"
mkdir -p "$w/share/gone"
# its own session: on SIGTERM smbd signals its whole process group
start() { setsid smbd -F --no-process-group -s "$conf" </dev/null >/dev/null 2>&1 & echo $! >"$w/smbd.pid"; sleep 2; }
# smbd exits on SIGTERM; its pid file goes with it so that the next start does not find it.
stop() {
  local pid st k
  pid=$(cat "$w/smbd.pid")
  kill "$pid" 2>/dev/null || true
  for k in $(seq 1 50); do
    st=$(ps -o stat= -p "$pid" || true)
    case "$st" in "" | Z*) break ;; esac
    sleep 0.2
  done
  rm -f "$w/pid/smbd.pid"
}
start
q() { timeout 20 "$@" >/dev/null 2>&1 </dev/null || true; }
sc() { q smbclient -s "$conf" -p $port "$@"; }
users=(alice bob carol dave)
RANDOM=7
for i in $(seq 1 ${ROUNDS:-30}); do
  u=${users[$((RANDOM % 4))]}
  f="file$i.txt"
  echo "line $i" >"$w/$f"
  sc //127.0.0.1/team -U "alice%pw-alice" -c "lcd $w; put $f; ls; get $f /dev/null; rename $f moved$i.txt; mkdir dir$i; rmdir dir$i"
  sc //127.0.0.1/team -U "bob%pw-bob" -c "ls; get moved$i.txt /dev/null; del moved$i.txt; get nothere$i.txt /dev/null"
  sc //127.0.0.1/team -U "$u%pw-$u" -c "ls"
  [ $((i % 2)) = 0 ] && sc //127.0.0.1/team -U "alice%wrong$i" -c "ls"
  [ $((i % 3)) = 0 ] && sc //127.0.0.1/team -U "carol%pw-carol" -c "ls"
  [ $((i % 3)) = 1 ] && sc //127.0.0.1/public -N -c "lcd $w; put $f pub$i.txt; ls; del pub$i.txt"
  [ $((i % 4)) = 0 ] && sc //127.0.0.1/readonly -N -c "lcd $w; ls; get data$((i % 5 + 1)).bin /dev/null; put $f; get locked.txt /dev/null; del data1.bin"
  [ $((i % 4)) = 2 ] && sc //127.0.0.1/drop -U "bob%pw-bob" -c "lcd $w; put $f"
  [ $((i % 4)) = 3 ] && sc //127.0.0.1/drop -U "alice%pw-alice" -c "lcd $w; put $f; ls; del $f"
  [ $((i % 5)) = 0 ] && sc //127.0.0.1/nosuchshare$i -U "alice%pw-alice" -c "ls"
  [ $((i % 5)) = 1 ] && sc -L //127.0.0.1 -U "bob%pw-bob"
  [ $((i % 5)) = 2 ] && sc //127.0.0.1/team -U "bob%pw-bob" -m NT1 -c "ls"
  [ $((i % 6)) = 0 ] && sc //127.0.0.1/gone -N -c "ls"
  [ $((i % 6)) = 3 ] && q rpcclient -s "$conf" -p $port -U "alice%pw-alice" -c "srvinfo; netshareenumall; enumdomusers; queryuser alice; lookupnames bob; lookupnames nosuch$i" 127.0.0.1
  [ $((i % 7)) = 0 ] && q smbcacls -s "$conf" -p $port -U "alice%pw-alice" //127.0.0.1/team /
  [ $((i % 7)) = 4 ] && sc //127.0.0.1/team -U "bob%pw-bob" -m SMB3 -e -c "ls; allinfo ."
  [ $((i % 8)) = 0 ] && { printf 'garbage\r\n' | q timeout 3 nc -q1 127.0.0.1 $port; }
  [ $((i % 10)) = 5 ] && { smbcontrol -s "$conf" smbd reload-config >/dev/null 2>&1 || true; }
  [ "$i" = 12 ] && rmdir "$w/share/gone"
  [ "$i" = 20 ] && { stop; write_conf 3; start; }
  rm -f "$w/$f"
  sleep 0.2
done
stop
# the RPC helpers smbd started on demand (samba-dcerpcd, rpcd_*) run from this configuration
for p in $(pgrep -f "configfile=$conf" || true); do kill "$p" 2>/dev/null || true; done
mkdir -p "$out/Samba"
cp "$w/log.smbd" "$out/Samba/Samba_raw.log"
for u in "${made[@]}"; do userdel "$u" 2>/dev/null || true; done
rm -rf "$w"
