#!/bin/bash
# Produces Slapd/Slapd_raw.log: a real OpenLDAP slapd 2.5 (`loglevel stats`, run with `-d stats`
# so its log goes to stderr with its own time-and-thread prefix, as in a container) while the
# ldap-utils clients bind (simple with good, wrong and unknown DNs, anonymous, SASL EXTERNAL over
# ldapi), search with varied filters, scopes, limits and paging, add, modify, rename, compare and
# delete entries (existing, missing, schema-violating, not allowed by the ACLs, not unique),
# change passwords, ask for StartTLS and WhoAmI, idle out, and write garbage to the socket;
# a clean stop and a restart. Usage: slapd.sh OUTDIR   (127.0.0.1:53389 and an ldapi socket)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-slapd.XXXXXX)
mkdir -p "$w/db"
cat >"$w/slapd.conf" <<C
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload unique
moduleload ppolicy
pidfile $w/slapd.pid
idletimeout 4
sizelimit 15
access to dn.base="" by * read
access to dn.base="cn=Subschema" by * read
access to attrs=userPassword
  by self write
  by anonymous auth
  by * none
access to dn.subtree="ou=people,dc=example,dc=org"
  by dn.exact="uid=admin,ou=people,dc=example,dc=org" write
  by self write
  by users read
  by anonymous read
access to dn.subtree="ou=secret,dc=example,dc=org"
  by dn.exact="uid=admin,ou=people,dc=example,dc=org" read
  by * none
access to * by users read by anonymous read
database mdb
maxsize 104857600
suffix "dc=example,dc=org"
rootdn "cn=manager,dc=example,dc=org"
rootpw secret
directory $w/db
index objectClass eq
index uid eq
authz-regexp "gidNumber=0\\\\+uidNumber=0,cn=peercred,cn=external,cn=auth" "cn=manager,dc=example,dc=org"
overlay unique
unique_uri ldap:///ou=people,dc=example,dc=org?mail?sub
overlay ppolicy
ppolicy_default "cn=default,ou=policies,dc=example,dc=org"
ppolicy_use_lockout
C
S="ldapi://$(echo "$w/ldapi" | sed 's,/,%2F,g')"
start() {
  slapd -f "$w/slapd.conf" -h "ldap://127.0.0.1:53389/ $S" -d stats 2>>"$w/slapd.log" &
  sl=$!
  for _ in $(seq 1 50); do ldapsearch -x -H ldap://127.0.0.1:53389 -s base -b '' >/dev/null 2>&1 && break; sleep 0.2; done
}
H="-H ldap://127.0.0.1:53389"
B="dc=example,dc=org"
M=(-D "cn=manager,$B" -w secret)
q() { timeout 10 "$@" >/dev/null 2>&1 </dev/null || true; }
qi() { local f=$1; shift; timeout 10 "$@" <"$f" >/dev/null 2>&1 || true; }
start
cat >"$w/base.ldif" <<L
dn: $B
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,$B
objectClass: organizationalUnit
ou: people

dn: ou=groups,$B
objectClass: organizationalUnit
ou: groups

dn: ou=secret,$B
objectClass: organizationalUnit
ou: secret

dn: ou=policies,$B
objectClass: organizationalUnit
ou: policies

dn: cn=default,ou=policies,$B
objectClass: pwdPolicy
objectClass: person
cn: default
sn: policy
pwdAttribute: userPassword
pwdMaxFailure: 3
pwdLockout: TRUE
pwdLockoutDuration: 20
pwdMinLength: 6
pwdCheckQuality: 1
L
qi "$w/base.ldif" ldapadd -x $H "${M[@]}"
users="admin alice bob carol dave erin frank grace"
for u in $users; do
  cat >"$w/u.ldif" <<L
dn: uid=$u,ou=people,$B
objectClass: inetOrgPerson
objectClass: posixAccount
uid: $u
cn: $u example
sn: $u
mail: $u@example.org
uidNumber: $((1000 + ${#u}))
gidNumber: 100
homeDirectory: /home/$u
userPassword: pw-$u-123
L
  qi "$w/u.ldif" ldapadd -x $H "${M[@]}"
done
for i in $(seq 1 6); do
  printf 'dn: cn=vault%d,ou=secret,%s\nobjectClass: device\ncn: vault%d\nserialNumber: S%d\n' $i "$B" $i $i >"$w/s.ldif"
  qi "$w/s.ldif" ldapadd -x -Z $H "${M[@]}"
  qi "$w/s.ldif" ldapadd -x $H "${M[@]}"
done
set -- $users
n=0
for i in $(seq 1 45); do
  n=$((n + 1))
  u=$(echo $users | cut -d' ' -f$(( i % 8 + 1 )))
  D="uid=$u,ou=people,$B"
  q ldapsearch -x $H -b "$B" "(uid=$u)" cn mail
  q ldapsearch -x $H -D "$D" -w "pw-$u-123" -b "ou=people,$B" -s one "(objectClass=inetOrgPerson)" uid
  [ $((i % 2)) = 0 ] && q ldapsearch -x $H -D "$D" -w "wrong$i" -b "$B" "(uid=$u)"
  [ $((i % 3)) = 0 ] && q ldapsearch -x $H -D "uid=ghost$i,ou=people,$B" -w x -b "$B" "(uid=*)"
  [ $((i % 3)) = 1 ] && q ldapsearch -x $H -b "$B" -s sub "(&(objectClass=posixAccount)(|(uid=a*)(mail=*@example.org)))" uidNumber gidNumber
  [ $((i % 4)) = 0 ] && q ldapsearch -x $H -b "ou=secret,$B" "(cn=vault*)"
  [ $((i % 4)) = 1 ] && q ldapsearch -x $H -D "uid=admin,ou=people,$B" -w pw-admin-123 -b "ou=secret,$B" "(cn=vault*)" serialNumber
  [ $((i % 4)) = 2 ] && q ldapsearch -x $H -b "ou=nowhere,$B" "(cn=*)"
  [ $((i % 4)) = 3 ] && q ldapsearch -x $H -b "$B" -z 3 "(objectClass=*)" dn
  [ $((i % 5)) = 0 ] && q ldapsearch -x $H "${M[@]}" -b "$B" -E pr=4/noprompt "(objectClass=*)" dn
  [ $((i % 5)) = 1 ] && q ldapsearch -x $H -b "$B" "(objectClass=*)"
  [ $((i % 5)) = 2 ] && q ldapsearch -x $H -b "" -s base "(objectClass=*)" namingContexts supportedControl
  [ $((i % 5)) = 3 ] && q ldapsearch -x $H -b "cn=Subschema" -s base "(objectClass=subschema)" objectClasses
  [ $((i % 5)) = 4 ] && q ldapsearch -x $H -b "bad dn here" "(cn=x)"
  [ $((i % 6)) = 0 ] && q ldapsearch -x $H -b "$B" "(cn=broken"
  [ $((i % 6)) = 1 ] && q ldapsearch -Y EXTERNAL -H "$S" -b "$B" "(uid=$u)" dn
  [ $((i % 6)) = 2 ] && q ldapwhoami -x $H -D "$D" -w "pw-$u-123"
  [ $((i % 6)) = 3 ] && q ldapwhoami -Y EXTERNAL -H "$S"
  [ $((i % 6)) = 4 ] && q ldapcompare -x $H "$D" "mail:$u@example.org"
  [ $((i % 6)) = 5 ] && q ldapcompare -x $H "$D" "mail:nobody@example.org"
  [ $((i % 7)) = 0 ] && q ldapsearch -x -ZZ $H -b "$B" "(uid=$u)"
  # modifications: by the owner, by another user (denied), by the manager
  printf 'dn: %s\nchangetype: modify\nreplace: description\ndescription: note %d\n' "$D" $i >"$w/m.ldif"
  qi "$w/m.ldif" ldapmodify -x $H -D "$D" -w "pw-$u-123"
  [ $((i % 2)) = 1 ] && qi "$w/m.ldif" ldapmodify -x $H -D "uid=bob,ou=people,$B" -w pw-bob-123
  [ $((i % 3)) = 2 ] && { printf 'dn: %s\nchangetype: modify\nadd: shoeSize\nshoeSize: 42\n' "$D" >"$w/x.ldif"; qi "$w/x.ldif" ldapmodify -x $H "${M[@]}"; }
  [ $((i % 4)) = 1 ] && { printf 'dn: %s\nchangetype: modify\ndelete: telephoneNumber\n' "$D" >"$w/x.ldif"; qi "$w/x.ldif" ldapmodify -x $H "${M[@]}"; }
  [ $((i % 4)) = 3 ] && { printf 'dn: %s\nchangetype: modify\nreplace: mail\nmail: alice@example.org\n' "$D" >"$w/x.ldif"; qi "$w/x.ldif" ldapmodify -x $H "${M[@]}"; }
  # temporary entries: added, renamed, deleted; duplicates, missing and schema errors
  printf 'dn: cn=tmp%d,ou=groups,%s\nobjectClass: posixGroup\ncn: tmp%d\ngidNumber: %d\nmemberUid: %s\n' $i "$B" $i $((5000 + i)) "$u" >"$w/g.ldif"
  qi "$w/g.ldif" ldapadd -x $H "${M[@]}"
  [ $((i % 3)) = 0 ] && qi "$w/g.ldif" ldapadd -x $H "${M[@]}"
  [ $((i % 5)) = 2 ] && { printf 'dn: cn=bad%d,ou=groups,%s\nobjectClass: posixGroup\ncn: bad%d\n' $i "$B" $i >"$w/x.ldif"; qi "$w/x.ldif" ldapadd -x $H "${M[@]}"; }
  [ $((i % 5)) = 3 ] && { printf 'dn: cn=orphan%d,ou=missing,%s\nobjectClass: device\ncn: orphan%d\n' $i "$B" $i >"$w/x.ldif"; qi "$w/x.ldif" ldapadd -x $H "${M[@]}"; }
  [ $((i % 5)) = 4 ] && qi "$w/g.ldif" ldapadd -x $H -D "$D" -w "pw-$u-123"
  [ $((i % 2)) = 0 ] && q ldapmodrdn -x $H "${M[@]}" "cn=tmp$i,ou=groups,$B" "cn=team$i"
  [ $((i % 2)) = 0 ] && q ldapdelete -x $H "${M[@]}" "cn=team$i,ou=groups,$B"
  [ $((i % 2)) = 1 ] && q ldapdelete -x $H "${M[@]}" "cn=tmp$i,ou=groups,$B"
  [ $((i % 4)) = 2 ] && q ldapdelete -x $H "${M[@]}" "cn=gone$i,ou=groups,$B"
  [ $((i % 6)) = 4 ] && q ldapdelete -x $H "${M[@]}" "ou=people,$B"
  [ $((i % 7)) = 3 ] && q ldapdelete -x $H -D "$D" -w "pw-$u-123" "uid=carol,ou=people,$B"
  # passwords: changed by the user, too short, by the manager
  [ $((i % 6)) = 5 ] && q ldappasswd -x $H -D "$D" -w "pw-$u-123" -s "pw-$u-123" "$D"
  [ $((i % 9)) = 4 ] && q ldappasswd -x $H -D "$D" -w "pw-$u-123" -s "abc" "$D"
  [ $((i % 9)) = 7 ] && q ldappasswd -x $H "${M[@]}" -s "pw-$u-123" "$D"
  # garbage, idle connections, connections that just close
  [ $((i % 8)) = 0 ] && { printf 'GET / HTTP/1.0\r\n\r\n' | timeout 2 nc -q 1 127.0.0.1 53389 >/dev/null 2>&1 || true; }
  [ $((i % 8)) = 4 ] && { head -c 64 /dev/urandom | timeout 2 nc -q 1 127.0.0.1 53389 >/dev/null 2>&1 || true; }
  [ $((i % 10)) = 5 ] && { timeout 6 nc 127.0.0.1 53389 </dev/null >/dev/null 2>&1 & }
  [ $((i % 11)) = 0 ] && q ldapsearch -x $H -D "cn=manager,$B" -w wrong -b "$B" "(cn=*)"
done
# a lockout: three wrong passwords, then the right one
for k in 1 2 3 4; do q ldapwhoami -x $H -D "uid=frank,ou=people,$B" -w "bad$k"; done
q ldapwhoami -x $H -D "uid=frank,ou=people,$B" -w pw-frank-123
sleep 6
kill -INT "$sl"; wait "$sl" 2>/dev/null || true
start
for i in $(seq 1 15); do
  q ldapsearch -x $H -b "$B" "(uid=*)" uid
  q ldapwhoami -x $H -D "uid=grace,ou=people,$B" -w pw-grace-123
  [ $((i % 3)) = 0 ] && q ldapsearch -x $H -D "uid=grace,ou=people,$B" -w nope -b "$B" "(uid=*)"
  [ $((i % 4)) = 0 ] && q ldapsearch -x $H -b "$B" -l 1 "(description=*note*)" description
done
kill -INT "$sl"; wait "$sl" 2>/dev/null || true
wait || true
mkdir -p "$out/Slapd"
cp "$w/slapd.log" "$out/Slapd/Slapd_raw.log"
rm -rf "$w"
