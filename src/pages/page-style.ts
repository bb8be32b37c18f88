/**
 * The one stylesheet of the service's pages, served at /assets/pages.css (no CDN; the CSP allows only our
 * own origin). Colours meet WCAG AA contrast on their backgrounds; focus is always visible; tables scroll
 * inside their wrapper on a phone instead of widening the page.
 */
export const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1b1f24;background:#f6f7f9}
body{margin:0}
[hidden]{display:none !important}
a{color:#0b57d0}
a:hover{color:#08419c}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.skip{position:absolute;left:-9999px}
.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:10}
header.top{background:#1b2a41;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header.top .brand{font-weight:700;color:#fff;text-decoration:none}
header.top nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
header.top nav a{color:#dbe6ff;text-decoration:none;padding:.25rem 0;display:inline-block}
header.top nav a[aria-current="page"]{color:#fff;border-bottom:2px solid #fff}
header.top .who{margin-left:auto;font-size:.9rem;color:#dbe6ff}
header.top form{display:inline}
main{max-width:70rem;margin:0 auto;padding:1.25rem 1rem 3rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.25rem;margin:1.5rem 0 .5rem}
h3{font-size:1.05rem;margin:1rem 0 .25rem}
p.lead{font-size:1.05rem;color:#3b4350}
.muted{color:#566070}
.card{background:#fff;border:1px solid #d5dae1;border-radius:8px;padding:1rem 1.1rem;margin:0 0 1rem}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(18rem,1fr));gap:1rem}
.cards .card{margin:0}
.row{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
.badge{display:inline-block;font-size:.8rem;font-weight:600;padding:.1rem .5rem;border-radius:999px;border:1px solid transparent}
.badge.ok{background:#e3f4e8;color:#0f5a2a;border-color:#a9dcb8}
.badge.warn{background:#fff4d6;color:#6b4a00;border-color:#f0d48a}
.badge.bad{background:#fde7e7;color:#8a1010;border-color:#f1b0b0}
.badge.info{background:#e6efff;color:#123e8c;border-color:#b4c9f3}
.notice{border-left:4px solid #0b57d0;background:#eef3fd;padding:.6rem .8rem;margin:0 0 1rem;border-radius:4px}
.notice.ok{border-color:#1d7a3c;background:#e9f6ed}
.notice.warn{border-color:#a66b00;background:#fff7e0}
.notice.bad{border-color:#b3261e;background:#fdecea}
.table-wrap{position:relative;overflow-x:auto;background:#fff;border:1px solid #d5dae1;border-radius:8px}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.5rem .65rem;border-bottom:1px solid #e4e7ec;vertical-align:top}
th{background:#f0f2f5;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tfoot td{font-weight:600;background:#f7f8fa}
form.stack{display:grid;gap:.8rem;max-width:36rem}
form.stack button{justify-self:start}
fieldset{border:1px solid #d5dae1;border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;background:#fff}
legend{font-weight:600;padding:0 .25rem}
label{font-weight:600;display:block}
.hint{font-size:.875rem;color:#566070;margin:.15rem 0 .3rem}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=number],input[type=search],select,textarea{font:inherit;width:100%;max-width:36rem;padding:.45rem .55rem;border:1px solid #8a94a3;border-radius:6px;background:#fff;color:#1b1f24}
input[type=checkbox],input[type=radio]{width:1.1rem;height:1.1rem;vertical-align:middle;margin:0 .4rem 0 0}
.check{display:flex;align-items:flex-start;gap:.25rem;font-weight:400;margin:.3rem 0}
.check span{display:block}
button,.button{font:inherit;font-weight:600;display:inline-block;padding:.5rem 1rem;border-radius:6px;border:1px solid #0b57d0;background:#0b57d0;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:#0b57d0}
button.danger{background:#b3261e;border-color:#b3261e}
button:disabled{background:#c7ccd4;border-color:#c7ccd4;color:#3b4350;cursor:not-allowed}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.5rem 0}
dl.facts dt{font-weight:600;color:#3b4350}
dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;background:#eef0f3;padding:0 .25rem;border-radius:3px;font-size:.9em;word-break:break-all}
.secret{font-family:ui-monospace,"DejaVu Sans Mono",monospace;background:#fff7e0;border:1px dashed #a66b00;padding:.5rem;display:block;word-break:break-all}
progress{width:100%;height:1rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.card>h2:first-child,.card>h3:first-child{margin-top:0}
.check label{font-weight:400}
.check .hint{display:block}
details.card>summary,details.change>summary{cursor:pointer;padding:.15rem 0}
details.card[open]>summary{margin-bottom:.6rem}
details.change>.card{margin-top:.75rem}
table.progress{table-layout:fixed}
table.progress th:first-child{width:60%}
header.top button.link{background:transparent;border:1px solid #dbe6ff;color:#fff;padding:.2rem .6rem;font-weight:600}
.card>h2:first-child,.card>h3:first-child,.card>fieldset:first-child{margin-top:0}
.card form{display:inline-block}
.row form{margin:0}
pre.request{background:#1b2a41;color:#f2f5fa;padding:.75rem;border-radius:6px;overflow-x:auto;font-size:.85rem;max-width:100%}
pre.request code{background:transparent;color:inherit;padding:0;font-size:inherit;word-break:normal}
td.neg{color:#a0141b}
dl.totals{background:#fff;border:1px solid #d5dae1;border-radius:8px;padding:.75rem 1rem}
form.filters .row>div{flex:1 1 12rem}
.table-wrap:focus-visible{outline:3px solid #0b57d0}
ul.plan li{margin:.3rem 0}
form.row,form.filters .row{align-items:flex-end}
form.stack>p{margin:0}
code.action{word-break:normal;white-space:nowrap}
code.key{word-break:normal;overflow-wrap:anywhere;font-size:.8rem;color:#3b4350}
.cards>form.card{align-self:start}
tbody th[scope=row]{background:transparent}
@media (max-width:40rem){table.phone-cards thead{position:absolute;left:-9999px}table.phone-cards tr{display:block;border-bottom:1px solid #d5dae1;padding:.4rem 0}table.phone-cards td,table.phone-cards th{display:block;border:0;padding:.2rem .65rem;text-align:left}table.phone-cards td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#3b4350}}
@media (max-width:40rem){html{font-size:15px}main{padding:1rem .75rem 2rem}header.top .who{margin-left:0}}
`;
