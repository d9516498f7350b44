// report.html's style sheet: plain CSS, allowed by its hash (no inline style attributes anywhere).
export const PAGE_STYLE = `
:root{--pass:#1a7f37;--fail:#cf222e;--error:#9a6700;--line:#d0d7de;--muted:#57606a;--mark:#fff1a8;--diff:#ffebe9}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1500px;margin:0 auto;padding:16px 24px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:20px 0 8px}h3{font-size:15px;margin:14px 0 6px}
.verdict{display:inline-block;padding:2px 10px;border-radius:6px;color:#fff;font-weight:600}
.v-PASS{background:var(--pass)}.v-WARN{background:var(--error)}.v-BLOCK{background:var(--fail)}
.muted{color:var(--muted)}.small{font-size:12px}
table{border-collapse:collapse;width:100%;margin:4px 0 10px}
th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:6px;margin:4px 0;max-height:320px;overflow:auto}
.filters{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:8px 0}
.filters button{border:1px solid var(--line);background:#f6f8fa;border-radius:14px;padding:2px 10px;cursor:pointer}
.filters button[aria-pressed=true]{background:#0969da;color:#fff;border-color:#0969da}
.filters input,.filters select{padding:3px 6px;border:1px solid var(--line);border-radius:6px}
tr.case{cursor:pointer}tr.case:hover{background:#f6f8fa}tr.case.open{background:#ddf4ff}
.pass{color:var(--pass)}.fail{color:var(--fail)}.error{color:var(--error)}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.side{border:1px solid var(--line);border-radius:6px;padding:8px;min-width:0}
.strip{display:flex;flex-wrap:wrap;gap:3px;margin:4px 0}
.strip button{width:26px;height:22px;border:2px solid transparent;border-radius:4px;color:#fff;font-size:11px;cursor:pointer}
.strip button.g-pass{background:var(--pass)}.strip button.g-fail{background:var(--fail)}.strip button.g-error{background:var(--error)}
.strip button.selected{border-color:#000;outline:2px solid #fff;outline-offset:-4px}
tr.first-diff>td{background:var(--diff)}tr.first-diff>td:first-child{border-left:4px solid var(--fail)}
.badge{display:inline-block;border-radius:4px;padding:0 5px;font-size:11px;background:#eaeef2}
.badge.first{background:var(--fail);color:#fff}
mark{background:var(--mark);padding:0 1px}
td.differs{background:var(--diff)}
.detail{padding:8px 4px 16px}
.reasons li{margin:2px 0}.weakens{color:var(--fail);font-weight:600}
`.trim();
