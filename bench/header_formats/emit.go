// Writes each record of a header_formats.py record file through Go's standard loggers (log's
// default flags and with microseconds and the caller; log/slog's TextHandler).
package main

import (
	"bufio"
	"context"
	"log"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	mode, in, outPath := os.Args[1], os.Args[2], os.Args[3]
	f, err := os.Open(in)
	if err != nil {
		panic(err)
	}
	out, err := os.Create(outPath)
	if err != nil {
		panic(err)
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	defer w.Flush()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lg := log.New(w, "", log.LstdFlags)
	if mode == "go-log-micro" {
		lg.SetFlags(log.LstdFlags | log.Lmicroseconds | log.Lshortfile)
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	levels := map[string]slog.Level{"TRACE": slog.LevelDebug, "DEBUG": slog.LevelDebug,
		"INFO": slog.LevelInfo, "WARN": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": slog.LevelError}
	for sc.Scan() {
		r := strings.SplitN(sc.Text(), "\t", 7)
		msg := strings.NewReplacer(`\t`, "\t", `\\`, `\`).Replace(r[6])
		ms, _ := strconv.ParseInt(r[0], 10, 64)
		switch mode {
		case "go-slog-text":
			rec := slog.NewRecord(time.UnixMilli(ms).UTC(), levels[r[1]], msg, 0)
			h.Handle(context.Background(), rec)
		default:
			// log takes the time from the clock: this run's, not the record's.
			lg.Output(1, msg)
		}
	}
}
