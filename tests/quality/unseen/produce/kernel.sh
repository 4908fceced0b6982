#!/bin/bash
# Produces Kernel/Kernel_raw.log: a Linux kernel's own log — Debian 12's cloud kernel (6.1,
# linux-image-cloud-amd64) booted in QEMU (TCG) with a busybox
# initramfs, its console on a serial port at loglevel 7 (timestamps on) — while the guest's
# /init (produce/kernel/init) loads drivers, mounts good, unreadable, damaged and older
# ext file systems with right and wrong options, runs programs that fault (produce/kernel/
# faults.c: NULL and read-only writes, division by zero, invalid and privileged instructions,
# a stack overflow), uses loop devices, swap, bridges, dummy, tap and veth links, drops
# caches, dumps memory and blocked tasks by SysRq, unloads and reloads the bridge module and
# runs out of memory twice; the host hot-plugs and unplugs disks and a network link's carrier
# meanwhile, and the guest's init exits at the end (the kernel panics).
# Usage: kernel.sh OUTDIR   (root; apt-get install qemu-system-x86 linux-image-cloud-amd64
# busybox-static e2fsprogs gcc netcat-openbsd)
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
kver=$(ls /boot | sed -n 's/^vmlinuz-\(.*-cloud-amd64\)$/\1/p' | sort -V | tail -1)
w=$(mktemp -d /tmp/unseen-kernel.XXXXXX)
root=$w/root
mkdir -p "$root"/{bin,proc,sys,dev,tmp,mnt,modules}
cp /bin/busybox "$root/bin/busybox"
gcc -static -O0 -o "$root/bin/faults" "$here/kernel/faults.c"
cp "$here/kernel/init" "$root/init"
chmod 755 "$root/init"
# drivers and what they need, in the order modules.dep gives
: >"$root/modules/order"
for m in virtio_pci virtio_blk virtio_net loop dummy bridge tun veth; do
  deps=$(grep -E "/$m\.ko:" "/lib/modules/$kver/modules.dep" | cut -d: -f2)
  for d in $(echo $deps | tr ' ' '\n' | tac) "kernel/$(grep -oE "^[^:]*/$m\.ko" "/lib/modules/$kver/modules.dep" | sed 's|^kernel/||')"; do
    b=$(basename "$d")
    grep -qx "$b" "$root/modules/order" && continue
    cp "/lib/modules/$kver/$d" "$root/modules/$b"
    echo "$b" >>"$root/modules/order"
  done
done
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$w/initramfs.gz"
# disks: a good ext4 with a file whose inode is cleared (a lookup error), one without a
# superblock, an ext3 one; a disk to hot-plug
mkfs.ext4 -q -F "$w/a.img" 32M
debugfs -w -R "mkdir dir" "$w/a.img" >/dev/null 2>&1
for i in 1 2 3; do echo "file $i" >"$w/f$i"; debugfs -w -R "write $w/f$i dir/f$i" "$w/a.img" >/dev/null 2>&1; done
debugfs -w -R "clri dir/f2" "$w/a.img" >/dev/null 2>&1
mkfs.ext4 -q -F "$w/b.img" 16M
dd if=/dev/zero of="$w/b.img" bs=1024 seek=1 count=2 conv=notrunc 2>/dev/null
mkfs.ext3 -q -F "$w/c.img" 16M
truncate -s 8M "$w/hp.img"
# KVM when it works here (ACCEL=kvm); nested, it may not: TCG by default
accel=${ACCEL:-tcg}
: >"$w/markers"
qemu-system-x86_64 -machine pc,accel=$accel -m 256 -smp 2 -display none -no-reboot \
  -kernel "/boot/vmlinuz-$kver" -initrd "$w/initramfs.gz" \
  -append "console=ttyS0 loglevel=7 panic=1 printk.time=1" \
  -serial "file:$w/console" -serial "file:$w/markers" -monitor "unix:$w/mon,server,nowait" \
  -drive "file=$w/a.img,if=virtio,format=raw" -drive "file=$w/b.img,if=virtio,format=raw" \
  -drive "file=$w/c.img,if=virtio,format=raw" \
  -netdev user,id=n0 -device virtio-net-pci,netdev=n0,id=net0 </dev/null >"$w/qemu.out" 2>&1 &
qpid=$!
mon() { printf '%s\n' "$@" | timeout 5 nc -U -q1 "$w/mon" >/dev/null 2>&1 || true; }
seen=0
end=$(($(date +%s) + 600))
while kill -0 "$qpid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
  n=$(grep -c '^round' "$w/markers" || true)
  if [ "$n" -gt "$seen" ]; then
    seen=$n
    case $n in
      1 | 3) mon "drive_add 0 if=none,id=hp$n,file=$w/hp.img,format=raw" "device_add virtio-blk-pci,drive=hp$n,id=hpdev$n" ;;
      2 | 4) mon "device_del hpdev$((n - 1))" ;;
    esac
    [ "$n" -ge 2 ] && { mon "set_link net0 off"; sleep 1; mon "set_link net0 on"; }
  fi
  sleep 0.5
done
kill "$qpid" 2>/dev/null || true
mkdir -p "$out/Kernel"
tr -d '\r' <"$w/console" >"$out/Kernel/Kernel_raw.log"
rm -rf "$w"
