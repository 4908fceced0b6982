#!/bin/bash
# Produces PulseAudio/PulseAudio_raw.log: a real PulseAudio 16.1 sound server (a desktop's
# audio daemon, per-user, no hardware: null sinks) logging to its own file at debug level with
# relative times, while pactl, pacmd, pacat, parec and paplay load and unload modules (good,
# unknown and with bad arguments), play and record streams of several sample specs, move,
# kill, mute and suspend them, connect over TCP with and without access, send garbage; signals,
# an exit and a restart. Usage: pulseaudio.sh OUTDIR   (root; TCP ports 52296 and 52295)
set -u
out=$1
u=u11pa
id "$u" >/dev/null 2>&1 || useradd -m -s /bin/sh "$u"
w=$(mktemp -d /tmp/unseen-pa.XXXXXX)
chmod 755 "$w"
mkdir -p "$w/home" "$w/run"
chmod 700 "$w/run"
chown -R "$u" "$w/home" "$w/run"
cat >"$w/default.pa" <<C
load-module module-native-protocol-unix
load-module module-cli-protocol-unix
load-module module-null-sink sink_name=speakers sink_properties=device.description=Speakers
load-module module-null-sink sink_name=headset rate=48000 channels=2
load-module module-null-source source_name=mic
load-module module-always-sink
load-module module-stream-restore
load-module module-default-device-restore
load-module module-rescue-streams
load-module module-suspend-on-idle timeout=3
load-module module-position-event-sounds
load-module module-role-cork
load-module module-filter-heuristics
load-module module-filter-apply
set-default-sink speakers
C
env_u=(env HOME="$w/home" XDG_RUNTIME_DIR="$w/run")
start_pa() {
  # in a subshell, so that `wait` below waits for the clients only
  (runuser -u "$u" -- "${env_u[@]}" pulseaudio -n -F "$w/default.pa" --exit-idle-time=-1 \
    --log-target=file:"$w/home/pa.log.$1" --log-level=debug --log-time=1 --daemonize=no &)
  sleep 3
}
as_u() { runuser -u "$u" -- "${env_u[@]}" timeout 15 "$@" >/dev/null 2>&1 </dev/null || true; }
play() {  # play SECONDS-OF-BYTES RATE CHANNELS FORMAT [pacat options]
  runuser -u "$u" -- "${env_u[@]}" bash -c "head -c $1 /dev/urandom | timeout 15 pacat --rate=$2 \
    --channels=$3 --format=$4 ${*:5}" >/dev/null 2>&1 || true
}

start_pa 1
as_u pactl info
as_u pactl list short sinks
as_u pactl load-module module-null-sink sink_name=hdmi rate=44100 channels=6
as_u pactl load-module module-combine-sink sink_name=both slaves=speakers,headset
as_u pactl load-module module-remap-sink sink_name=mono master=speakers channels=1 channel_map=mono
as_u pactl load-module module-loopback source=mic sink=headset latency_msec=50
as_u pactl load-module module-native-protocol-tcp port=52296 auth-ip-acl=127.0.0.1 auth-anonymous=0
as_u pactl load-module module-simple-protocol-tcp port=52295 sink=speakers record=false
as_u pactl load-module module-pipe-sink file="$w/run/fifo-out" sink_name=pipe
as_u pactl load-module module-no-such-thing
as_u pactl load-module module-null-sink rate=abc
as_u pactl load-module module-null-sink channels=40
as_u pactl load-module module-loopback source=nowhere
as_u pactl load-module module-combine-sink slaves=ghost
as_u pactl load-module module-native-protocol-tcp port=52296
for r in 1 2 3; do
  play 200000 44100 2 s16le &
  play 120000 22050 1 s16le --device=headset --client-name=game$r &
  play 300000 48000 2 float32le --device=both --stream-name=music$r &
  play 80000 8000 1 u8 --device=mono --property=media.role=phone &
  play 60000 96000 2 s24le --device=hdmi --latency-msec=20 &
  sleep 1
  idx=$(runuser -u "$u" -- "${env_u[@]}" pactl list short sink-inputs 2>/dev/null | awk 'NR==1{print $1}')
  [ -n "$idx" ] && as_u pactl move-sink-input "$idx" headset
  idx=$(runuser -u "$u" -- "${env_u[@]}" pactl list short sink-inputs 2>/dev/null | awk 'NR==2{print $1}')
  [ -n "$idx" ] && as_u pactl kill-sink-input "$idx"
  as_u pactl move-sink-input 9999 speakers
  as_u pactl set-sink-volume speakers $((r * 30))%
  as_u pactl set-sink-volume headset +5%
  as_u pactl set-sink-mute speakers toggle
  as_u pactl set-sink-mute nosuchsink 1
  as_u pactl set-default-sink headset
  as_u pactl set-default-sink speakers
  as_u pactl suspend-sink hdmi 1
  as_u pactl suspend-sink hdmi 0
  as_u pactl set-source-volume mic 70%
  as_u pactl set-card-profile 0 off
  runuser -u "$u" -- "${env_u[@]}" timeout 2 parec --device=speakers.monitor --rate=16000 \
    --channels=1 >/dev/null 2>&1 || true
  runuser -u "$u" -- "${env_u[@]}" timeout 2 parec --device=mic >/dev/null 2>&1 || true
  runuser -u "$u" -- "${env_u[@]}" timeout 2 parec --device=nosuchsource >/dev/null 2>&1 || true
  wait
  # TCP: an allowed client with the cookie, one without it, garbage on both protocols
  PULSE_SERVER=tcp:127.0.0.1:52296 as_u pactl stat
  env HOME=/tmp PULSE_SERVER=tcp:127.0.0.1:52296 timeout 5 pactl stat >/dev/null 2>&1 || true
  head -c 4000 /dev/urandom | timeout 3 nc -q 1 127.0.0.1 52296 >/dev/null 2>&1 || true
  head -c 40000 /dev/urandom | timeout 3 nc -q 1 127.0.0.1 52295 >/dev/null 2>&1 || true
  as_u pacmd list-sinks
  as_u pacmd set-sink-port speakers analog-output
  as_u pacmd play-file /nonexistent.wav speakers
  as_u pacmd update-sink-proplist speakers device.description=Desk$r
  as_u pacmd unknown-command
  sleep 5
done
as_u pactl unload-module module-combine-sink
as_u pactl unload-module module-remap-sink
as_u pactl unload-module 999
as_u pactl unload-module module-loopback
play 100000 44100 2 s16le --device=pipe &
sleep 2
timeout 3 cat "$w/run/fifo-out" >/dev/null 2>&1 &
sleep 2
wait
pid=$(pgrep -u "$u" -x pulseaudio | head -1)
kill -USR1 "$pid"; sleep 1
kill -USR2 "$pid"; sleep 1
kill -HUP "$pid"; sleep 1
as_u pactl exit
sleep 2
kill "$(pgrep -u "$u" -x pulseaudio)"
sleep 1
start_pa 2
for r in 4 5; do
  play 150000 44100 2 s16le --device=speakers &
  play 50000 11025 1 s16be --device=headset &
  as_u pactl load-module module-null-sink sink_name=tmp$r
  play 50000 44100 2 s16le --device=tmp$r &
  sleep 1
  as_u pactl unload-module module-null-sink
  as_u pactl set-sink-volume speakers 150%
  wait
  sleep 4
done
kill -TERM "$(pgrep -u "$u" -x pulseaudio)"
sleep 2
mkdir -p "$out/PulseAudio"
cat "$w/home/pa.log.1" "$w/home/pa.log.2" >"$out/PulseAudio/PulseAudio_raw.log"
rm -rf "$w"
userdel -r "$u" >/dev/null 2>&1 || true
