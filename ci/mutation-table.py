#!/usr/bin/env python3
# The per-file table, the rate and the survivors' table of one mutation sample,
# as docs/mutation.md shows them:
#   ci/mutation-table.py docs/mutation/seed-S.jsonl docs/mutation/equivalent.txt docs/mutation/seed-S-survivors.txt
# A mutant judged more than once counts with its last verdict.
import json, collections, sys
res, eqf, clsf = sys.argv[1:4]
last = collections.OrderedDict()
for l in open(res):
    l = l.strip()
    if l:
        r = json.loads(l); last[r['id']] = r
eq = set()
for l in open(eqf):
    l = l.strip()
    if l and not l.startswith('#'): eq.add(l.split()[0])
cls = {}
for l in open(clsf):
    if l.startswith('#') or not l.strip(): continue
    id, kind, why = l.rstrip('\n').split('|', 2); cls[id] = (kind, why)
rows = {}
tot = [0] * 7
surv = []
for id, r in last.items():
    f = r['file'].split('/')[-1]
    d = rows.setdefault(f, [0] * 7)
    d[0] += 1
    v = r['tracebed']['verdict']
    if v == 'equivalent': d[1] += 1
    elif id in eq and v == 'survived': d[2] += 1
    elif v == 'stillborn': d[3] += 1
    elif v in ('killed', 'crashed'):
        d[4] += 1; d[5] += v == 'crashed'
    elif v == 'survived':
        d[6] += 1; surv.append(r)
print("| file | mutants | equivalent (object code) | equivalent (read) | stillborn | caught (crashed) | survived |")
print("|---|---:|---:|---:|---:|---:|---:|")
for f in sorted(rows):
    d = rows[f]; tot = [a + b for a, b in zip(tot, d)]
    print(f"| `{f}` | {d[0]} | {d[1]} | {d[2]} | {d[3]} | {d[4]} ({d[5]}) | {d[6]} |")
print(f"| **all** | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} | {tot[4]} ({tot[5]}) | {tot[6]} |")
live = tot[4] + tot[6]
print(f"\nRATE {tot[4]} of {live} = {100.0 * tot[4] / max(live, 1):.1f} %  (judged {tot[0]})\n")
print("| mutant | change | first classification |")
print("|---|---|---|")
kinds = collections.Counter()
for r in surv:
    k, why = cls.get(r['id'], ('unread', 'not yet read'))
    kinds[k] += 1
    short = r['id'].split('/')[-1].rsplit(':', 2)[0]
    o = r['original'].strip().replace('|', '\\|'); m = r['mutated'].strip().replace('|', '\\|')
    print(f"| `{short}` ({r['function']}) | `{o}` → `{m}` | {k}: {why} |")
print("\nKINDS", dict(kinds))
