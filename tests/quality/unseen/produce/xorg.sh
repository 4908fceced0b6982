#!/bin/bash
# Produces Xorg/Xorg_raw.log: a real X.Org X server 1.21.1 (Debian 12 xserver-xorg-core) with
# the dummy video driver writing its own log file (an Xorg.0.log, -logverbose 7), started
# again and again with different configurations (depths, modes, video memory, unknown options,
# modules that exist and that do not, disabled extensions, input devices without drivers,
# server flags, a config that does not parse, a driver that is not there, a display already
# taken), while X clients change modes, keymaps, font paths and access and the server is reset
# (SIGHUP) and stopped. The sandbox's kernel command line, which Xorg logs at start, is
# replaced by a Debian-like one. Usage: xorg.sh OUTDIR   (root; displays :57 and :58)
set -u
out=$1
w=$(mktemp -d /tmp/unseen-xorg.XXXXXX)
n=0
screen() {  # screen DEPTH MODES...
  local d=$1; shift
  cat <<C
Section "Monitor"
  Identifier "mon"
  HorizSync 5.0-1000.0
  VertRefresh 5.0-200.0
EndSection
Section "Screen"
  Identifier "screen"
  Device "dummy"
  Monitor "mon"
  DefaultDepth $d
  SubSection "Display"
    Depth $d
    Modes $*
  EndSubSection
EndSection
C
}
device() {  # device VIDEORAM [extra lines]
  printf 'Section "Device"\n  Identifier "dummy"\n  Driver "dummy"\n  VideoRam %s\n%s\nEndSection\n' \
    "$1" "${2:-}"
}
xs() {  # xs DISPLAY CONFIG [extra server args]: start, wait until it answers or exits
  n=$((n + 1))
  local d=$1 c=$2; shift 2
  Xorg "$d" -config "$c" -logfile "$w/log.$(printf %02d $n)" -logverbose 7 -verbose 0 \
    -nolisten tcp -novtswitch -sharevts "$@" >/dev/null 2>&1 &
  xpid=$!
  for _ in $(seq 1 40); do
    DISPLAY=$d xdpyinfo >/dev/null 2>&1 && return 0
    kill -0 "$xpid" 2>/dev/null || return 1
    sleep 0.25
  done
}
x() { DISPLAY=:57 timeout 10 "$@" >/dev/null 2>&1 || true; }
stop() {  # a server that crashes while it stops (it does, after a reset) hangs: kill it
  kill -TERM "$xpid" 2>/dev/null
  for _ in $(seq 1 20); do kill -0 "$xpid" 2>/dev/null || break; sleep 0.25; done
  kill -KILL "$xpid" 2>/dev/null; wait "$xpid" 2>/dev/null
}
clients() {
  x xrandr --output DUMMY0 --mode 1024x768
  x xrandr --newmode "800x600_75" 49.00 800 840 920 1040 600 603 607 629 -hsync +vsync
  x xrandr --addmode DUMMY0 800x600_75
  x xrandr --output DUMMY0 --mode 800x600_75
  x xrandr --output DUMMY0 --rotate left
  x xrandr --output DUMMY1 --auto --right-of DUMMY0
  x xrandr --fb 3000x2000
  x xrandr --output DUMMY1 --off
  x setxkbmap -layout de
  x setxkbmap -layout fr -variant azerty
  x setxkbmap -layout nosuch
  x setxkbmap -layout us -option ctrl:nocaps
  x xset +fp /usr/share/fonts/X11/misc
  x xset +fp /nonexistent/fonts
  x xset s activate
  x xset s 5 10
  x xhost +127.0.0.1
  x xhost -127.0.0.1
  x xinput list
  x xmodmap -e "keycode 66 = Escape"
  x xdpyinfo
}

# 1: a good configuration; clients; a reset by SIGHUP; a stop
{ device 256000; screen 24 '"1920x1080" "1280x1024" "1024x768"'; } >"$w/good.conf"
xs :57 "$w/good.conf" -noreset && { clients; kill -HUP "$xpid"; sleep 2; clients; stop; }
# 2: the same, reset when its last client leaves
xs :57 "$w/good.conf" && { clients; sleep 1; clients; stop; }
# 3: unknown driver options, modes nobody defined, depth 16, little video memory
{ device 4096 '  Option "NoSuchOption" "on"
  Option "ConstantDPI" "true"
  Option "IgnoreEDID" "yes"'; screen 16 '"1111x777" "2560x1600" "800x600" "640x480"'; } >"$w/odd.conf"
xs :57 "$w/odd.conf" && { x xrandr --output DUMMY0 --mode 640x480; stop; }
# 4: modules that exist and do not, extensions off, server flags, input devices without drivers
cat >"$w/modules.conf" <<C
Section "Module"
  Load "glx"
  Load "nosuchmodule"
  Disable "dri"
EndSection
Section "Extensions"
  Option "Composite" "Disable"
  Option "MIT-SHM" "Disable"
  Option "NoSuchExtension" "Disable"
EndSection
Section "ServerFlags"
  Option "DontZap" "off"
  Option "BlankTime" "1"
  Option "AutoAddDevices" "off"
  Option "NoSuchFlag" "1"
EndSection
Section "InputDevice"
  Identifier "mouse0"
  Driver "mouse"
  Option "Device" "/dev/input/mice"
EndSection
Section "InputDevice"
  Identifier "kbd0"
  Driver "kbd"
EndSection
Section "ServerLayout"
  Identifier "layout"
  Screen "screen"
  InputDevice "mouse0" "CorePointer"
  InputDevice "kbd0" "CoreKeyboard"
EndSection
C
{ device 64000; screen 24 '"1280x1024"'; } >>"$w/modules.conf"
xs :57 "$w/modules.conf" && { clients; stop; }
# 5: depth 30 and 8, a second display at the same time, then one on a display already taken
{ device 128000; screen 30 '"1600x1200"'; } >"$w/d30.conf"
{ device 16000; screen 8 '"1024x768"'; } >"$w/d8.conf"
xs :57 "$w/d30.conf" && {
  first=$xpid
  xs :58 "$w/d8.conf" && { DISPLAY=:58 timeout 5 xrandr >/dev/null 2>&1; stop; }
  xs :57 "$w/good.conf"
  xpid=$first; clients; stop; }
# 6: a configuration that does not parse, a driver that is not there, a screen without a device
printf 'Section "Device"\n  Identifier "dummy"\n  Driver "dummy"\n  VideoRam\nEndSection\nSection "Bogus"\n' \
  >"$w/broken.conf"
xs :57 "$w/broken.conf"; stop
{ printf 'Section "Device"\n  Identifier "dummy"\n  Driver "nosuchdrv"\nEndSection\n'
  screen 24 '"1024x768"'; } >"$w/nodriver.conf"
xs :57 "$w/nodriver.conf"; stop
screen 24 '"1024x768"' | sed 's/Device "dummy"/Device "ghost"/' >"$w/nodevice.conf"
xs :57 "$w/nodevice.conf"; stop
# 7: a good start again, clients, a stop
xs :57 "$w/good.conf" -noreset && { clients; stop; }

mkdir -p "$out/Xorg"
cat "$w"/log.* | sed -E 's/(\] Kernel command line: ).*/\1BOOT_IMAGE=\/boot\/vmlinuz-6.1.0-41-amd64 root=UUID=0f5c3d7e-7a41-4a8e-9f55-2a1e0e0b6c11 ro quiet/' \
  >"$out/Xorg/Xorg_raw.log"
rm -rf "$w"
