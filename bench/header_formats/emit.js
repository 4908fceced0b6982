// Writes each record of a header_formats.py record file through Node loggers installed from
// npm: winston (its README's timestamp + printf format, and format.cli), pino with pino-pretty's
// default output, bunyan through its own CLI's default "long" output.
const fs = require('fs');
const path = require('path');
const [mode, inPath, outPath, modules] = process.argv.slice(2);
module.paths.unshift(path.join(modules, 'node_modules'));
const recs = fs.readFileSync(inPath, 'utf8').split('\n').filter((l) => l).map((l) => {
  const f = l.split('\t');
  const msg = f.slice(6).join('\t').replace(/\\(.)/g, (_, c) => (c === 't' ? '\t' : c));
  return { ms: Number(f[0]), level: f[1], logger: f[2], thread: f[3], pid: Number(f[4]), msg };
});
const lower = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error', FATAL: 'error' };
const out = [];
if (mode.startsWith('winston')) {
  const winston = require('winston');
  const { combine, timestamp, printf, cli } = winston.format;
  let cur = 0;
  const Transport = require('winston-transport');
  class Sink extends Transport {
    log(info, cb) { out.push(info[Symbol.for('message')]); cb(); }
  }
  const fmt = mode === 'winston-cli'
    ? combine(cli())
    : combine(timestamp({ format: () => new Date(cur).toISOString() }),
      printf((i) => `${i.timestamp} ${i.level}: ${i.message}`));
  const log = winston.createLogger({ level: 'debug', format: fmt, transports: [new Sink()] });
  for (const r of recs) { cur = r.ms; log.log(lower[r.level], r.msg); }
  fs.writeFileSync(outPath, out.map((l) => l + '\n').join(''));
  // winston-cli colours; the file is what a forwarder tailing a TTY-less process gets.
} else if (mode === 'pino-pretty') {
  const pino = require('pino');
  const pretty = require('pino-pretty');
  const prettify = pretty.prettyFactory({ colorize: false });
  let cur = 0;
  const lines = [];
  const log = pino({ level: 'debug', timestamp: () => `,"time":${cur}` },
    { write: (s) => lines.push(s) });
  for (const r of recs) {
    cur = r.ms;
    log.child({ pid: r.pid, name: r.logger }, { msgPrefix: '' })[lower[r.level]](r.msg);
  }
  fs.writeFileSync(outPath, lines.map((l) => prettify(l)).join(''));
} else if (mode === 'bunyan') {
  const bunyan = require('bunyan');
  const lines = [];
  let cur = 0;
  const log = bunyan.createLogger({
    name: 'app', level: 'debug',
    streams: [{ type: 'raw', level: 'debug', stream: { write: (rec) => {
      rec.time = new Date(cur);
      lines.push(JSON.stringify(rec));
    } } }],
  });
  for (const r of recs) { cur = r.ms; log[lower[r.level]]('%s', r.msg); }
  fs.writeFileSync(outPath + '.json', lines.join('\n') + '\n');
}
