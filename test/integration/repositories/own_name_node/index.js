// Parses "2h", "1.5d", "100ms" into milliseconds (this copy is the workspace's: it says so).
const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function ms(text) {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(String(text).trim());
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * units[match[2] ?? 'ms'];
}

ms.fromWorkspace = true;
module.exports = ms;
