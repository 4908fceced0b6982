#!/bin/bash
# Produces OpenVPN/OpenVPN_raw.log: an OpenVPN 2.6 server's own log file (`verb 3`, UDP,
# tun, TLS with tls-crypt, a CRL, username/password checked by a script, a client-connect
# script, a management interface) while OpenVPN clients on loopback connect with good
# certificates, a revoked one, one from another CA, a wrong tls-crypt key, no tls-crypt, a
# wrong and a good password, a name the connect script refuses, the same certificate twice,
# more than max-clients; clients leave cleanly, die silently (ping timeout) and renegotiate;
# garbage datagrams; management commands (status, kill, signals), a SIGUSR1 soft restart, a
# SIGHUP restart and a stop. Interfaces are created but never configured (ifconfig-noexec).
# Usage: openvpn.sh OUTDIR   (UDP 127.0.0.1:11194, management on 127.0.0.1:11195)
set -u
out=$1
w=$(mktemp -d /tmp/unseen-openvpn.XXXXXX)
cd "$w"
export EASYRSA_BATCH=1
ersa=/usr/share/easy-rsa/easyrsa
pki() { # $1 = pki dir, $2 = CA name, rest = client names
    local d=$1 ca=$2
    shift 2
    EASYRSA_PKI=$d $ersa init-pki >/dev/null 2>&1
    EASYRSA_PKI=$d EASYRSA_REQ_CN=$ca $ersa build-ca nopass >/dev/null 2>&1
    EASYRSA_PKI=$d $ersa build-server-full server nopass >/dev/null 2>&1
    for c in "$@"; do EASYRSA_PKI=$d $ersa build-client-full "$c" nopass >/dev/null 2>&1; done
}
pki "$w/pki" LabCA alice bob carol dave erin mallory
pki "$w/other" OtherCA intruder
EASYRSA_PKI=$w/pki $ersa revoke mallory >/dev/null 2>&1
EASYRSA_PKI=$w/pki $ersa gen-crl >/dev/null 2>&1
openvpn --genkey tls-crypt "$w/tc.key"
openvpn --genkey tls-crypt "$w/wrong.key"
mkdir -p "$w/ccd"
echo "ifconfig-push 10.199.0.50 255.255.255.0" >"$w/ccd/carol"
printf 'alice:alicepw\nbob:bobpw\ncarol:carolpw\ndave:davepw\nerin:erinpw\n' >"$w/users"
cat >"$w/checkpw.sh" <<'S'
#!/bin/sh
u=$(sed -n 1p "$1"); p=$(sed -n 2p "$1")
grep -qx "$u:$p" "$(dirname "$0")/users"
S
cat >"$w/connect.sh" <<'S'
#!/bin/sh
[ "$common_name" = "erin" ] && exit 1
exit 0
S
chmod +x "$w/checkpw.sh" "$w/connect.sh"
cat >"$w/server.conf" <<C
port 11194
proto udp
local 127.0.0.1
dev tun
topology subnet
server 10.199.0.0 255.255.255.0
ifconfig-noexec
route-noexec
ca $w/pki/ca.crt
cert $w/pki/issued/server.crt
key $w/pki/private/server.key
dh none
crl-verify $w/pki/crl.pem
tls-crypt $w/tc.key
client-config-dir $w/ccd
keepalive 2 8
reneg-sec 25
max-clients 4
script-security 2
auth-user-pass-verify $w/checkpw.sh via-file
client-connect $w/connect.sh
management 127.0.0.1 11195
status $w/status.log 5
persist-key
verb 3
log $w/server.log
C
client() { # $1 = cert name, $2 = pki dir, $3 = tls-crypt key or "", $4 = user:password, rest = extra options
    local name=$1 p=$2 tc=$3 up=$4 n_up=$RANDOM
    shift 4
    printf '%s\n%s\n' "${up%%:*}" "${up#*:}" >"$w/up.$name.$n_up"
    openvpn --client --dev tun --proto udp --remote 127.0.0.1 11194 --nobind \
        --ifconfig-noexec --route-noexec --ca "$w/pki/ca.crt" --cert "$p/issued/$name.crt" \
        --key "$p/private/$name.key" ${tc:+--tls-crypt "$tc"} --auth-user-pass "$w/up.$name.$n_up" \
        --verb 1 --connect-retry-max 1 --resolv-retry 0 "$@" >/dev/null 2>&1 &
    echo $!
}
mgmt() { printf '%s\nquit\n' "$1" | timeout 5 nc -q 1 127.0.0.1 11195 >/dev/null 2>&1; sleep 0.5; }
openvpn --config "$w/server.conf" &
srv=$!
sleep 3
# good clients; one leaves cleanly, one is killed (ping timeout), one renegotiates
a=$(client alice "$w/pki" "$w/tc.key" alice:alicepw --explicit-exit-notify 2)
b=$(client bob "$w/pki" "$w/tc.key" bob:bobpw)
c=$(client carol "$w/pki" "$w/tc.key" carol:carolpw)
sleep 6
kill -TERM $a
kill -KILL $b
sleep 12
# a wrong password, an unknown user, a name the connect script refuses
d1=$(client dave "$w/pki" "$w/tc.key" dave:wrongpw --auth-retry none)
d2=$(client dave "$w/pki" "$w/tc.key" nobody:pw --auth-retry none)
e=$(client erin "$w/pki" "$w/tc.key" erin:erinpw)
sleep 8
kill -TERM $d1 $d2 $e 2>/dev/null
# a revoked certificate, another CA's, a wrong tls-crypt key, none at all
m=$(client mallory "$w/pki" "$w/tc.key" alice:alicepw)
i=$(client intruder "$w/other" "$w/tc.key" alice:alicepw)
k=$(client alice "$w/pki" "$w/wrong.key" alice:alicepw)
n=$(client alice "$w/pki" "" alice:alicepw)
sleep 10
kill -TERM $m $i $k $n 2>/dev/null
# garbage datagrams
for g in hello "$(printf 'X%.0s' $(seq 200))" "$(printf '\070\001\002\003\004\005\006\007\010')"; do
    printf '%s' "$g" | timeout 2 nc -u -w1 127.0.0.1 11194 || true
done
# the same certificate twice, then more clients than max-clients
a1=$(client alice "$w/pki" "$w/tc.key" alice:alicepw)
sleep 4
a2=$(client alice "$w/pki" "$w/tc.key" alice:alicepw)
d=$(client dave "$w/pki" "$w/tc.key" dave:davepw)
b=$(client bob "$w/pki" "$w/tc.key" bob:bobpw)
sleep 4
x=$(client erin "$w/pki" "$w/tc.key" erin:erinpw)
y=$(client bob "$w/pki" "$w/tc.key" bob:bobpw)
sleep 8
# management: status, a client killed, log and state queries, a soft restart
mgmt "status"
mgmt "status 3"
mgmt "state"
mgmt "load-stats"
mgmt "kill dave"
mgmt "kill nosuchclient"
mgmt "client-kill 99"
mgmt "verb 3"
mgmt "nonsense command"
sleep 3
mgmt "signal SIGUSR1"
sleep 10
kill -TERM $a1 $a2 $d $b $x $y $c 2>/dev/null
sleep 3
# a restart by SIGHUP with clients coming back
kill -HUP $srv
sleep 3
c=$(client carol "$w/pki" "$w/tc.key" carol:carolpw)
b=$(client bob "$w/pki" "$w/tc.key" bob:bobpw --explicit-exit-notify 2)
sleep 30
kill -TERM $b
sleep 2
kill -KILL $c
sleep 10
mgmt "signal SIGTERM"
wait $srv
mkdir -p "$out/OpenVPN"
cp "$w/server.log" "$out/OpenVPN/OpenVPN_raw.log"
cd /
rm -rf "$w"
