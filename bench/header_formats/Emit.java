// Writes each record of a header_formats.py record file through a real Java logging library
// (log4j2 PatternLayout, logback's default layout, java.util.logging's SimpleFormatter).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.time.Instant;
import java.util.*;

public class Emit {
  // log4j2 reads its clock from this class (-Dlog4j2.clock=Emit$RecordClock), so a line's
  // time is the record's, not the moment it was written.
  public static volatile long nowMillis;

  public static class RecordClock implements org.apache.logging.log4j.core.util.Clock {
    public long currentTimeMillis() { return nowMillis; }
  }

  static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); ++i) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char n = s.charAt(++i);
        b.append(n == 't' ? '\t' : n);
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  // Usage: Emit MODE RECORDS OUT [RECORDS OUT]...; log4j2 modes write OUT through a
  // configuration file OUT.xml beside it, the others write OUT themselves.
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    for (int a = 1; a + 1 < args.length; a += 2) {
      List<String[]> recs = new ArrayList<>();
      for (String l : Files.readAllLines(Paths.get(args[a]), StandardCharsets.UTF_8)) {
        String[] f = l.split("\t", 7);
        f[6] = unescape(f[6]);
        recs.add(f);
      }
      if (mode.startsWith("log4j2")) {
        org.apache.logging.log4j.core.config.Configurator.reconfigure(
            new File(args[a + 1] + ".xml").toURI());
        log4j2(recs);
        continue;
      }
      if (mode.equals("logback")) {
        PrintStream stdout = System.out;
        // logback's default console appender writes to whatever System.out is at the time.
        try (PrintStream ps = new PrintStream(new FileOutputStream(args[a + 1]), false, "UTF-8")) {
          System.setOut(ps);
          logback(recs);
          ps.flush();
        }
        System.setOut(stdout);
        continue;
      }
      try (Writer out = new OutputStreamWriter(new FileOutputStream(args[a + 1]),
                                               StandardCharsets.UTF_8)) {
        jul(mode, recs, out);
      }
    }
    if (mode.startsWith("log4j2")) org.apache.logging.log4j.LogManager.shutdown();
  }

  // fields: 0 millis, 1 level, 2 logger, 3 thread, 4 pid, 5 tid, 6 message
  static void log4j2(List<String[]> recs) {
    for (String[] r : recs) {
      nowMillis = Long.parseLong(r[0]);
      Thread.currentThread().setName(r[3]);
      org.apache.logging.log4j.Logger log = org.apache.logging.log4j.LogManager.getLogger(r[2]);
      log.log(org.apache.logging.log4j.Level.valueOf(r[1]), "{}", r[6]);
    }
  }

  static void logback(List<String[]> recs) {
    ch.qos.logback.classic.LoggerContext ctx =
        (ch.qos.logback.classic.LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
    for (String[] r : recs) {
      ch.qos.logback.classic.Logger log = ctx.getLogger(r[2]);
      String lv = r[1].equals("FATAL") ? "ERROR" : r[1];
      ch.qos.logback.classic.spi.LoggingEvent e = new ch.qos.logback.classic.spi.LoggingEvent(
          Emit.class.getName(), log, ch.qos.logback.classic.Level.toLevel(lv), r[6], null, null);
      e.setInstant(Instant.ofEpochMilli(Long.parseLong(r[0])));
      e.setThreadName(r[3]);
      log.callAppenders(e);
    }
  }

  static void jul(String mode, List<String[]> recs, Writer out) throws IOException {
    java.util.logging.SimpleFormatter fmt = new java.util.logging.SimpleFormatter();
    Map<String, java.util.logging.Level> levels = Map.of(
        "TRACE", java.util.logging.Level.FINER, "DEBUG", java.util.logging.Level.FINE,
        "INFO", java.util.logging.Level.INFO, "WARN", java.util.logging.Level.WARNING,
        "ERROR", java.util.logging.Level.SEVERE, "FATAL", java.util.logging.Level.SEVERE);
    for (String[] r : recs) {
      java.util.logging.LogRecord lr = new java.util.logging.LogRecord(levels.get(r[1]), r[6]);
      lr.setInstant(Instant.ofEpochMilli(Long.parseLong(r[0])));
      lr.setLoggerName(r[2]);
      lr.setSourceClassName(r[2]);
      lr.setSourceMethodName(r[5].equals("0") ? "run" : "handle");
      lr.setParameters(null);
      String s = fmt.format(lr);
      // The default format is two physical lines (the time and caller, then "LEVEL: message"):
      // the line that carries the message is the labelled one; the caller line is dropped.
      if (mode.equals("jul-default")) s = s.substring(s.indexOf('\n') + 1);
      out.write(s);
    }
  }
}
