import json, re, sys
# One row per measured layout: memory per category at its peak, counted on
# rank 0 / predicted by the cost model, and the verdicts' statuses.
cats = ['peak memory params', 'peak memory grads', 'peak memory optimizer', 'peak memory activations',
        'peak memory comm buffers', 'peak memory total']
print('| ranks | layout (tiny: hidden 8, 2 heads, seq 4, 1 step) | params | grads | optimizer | activations | comm | total | traffic verdicts | ranks differing |')
print('|---|---|---|---|---|---|---|---|---|---|')
for folder in sys.argv[1:]:
    vs = json.load(open(folder + '/verdicts.json'))
    nr = int(re.search(r'np(\d+)', folder).group(1))
    by = {}
    for v in vs:
        if v['technique'] == 'hybrid_step' and v['status'] != 'INFO': by.setdefault(v['params'], {})[v['quantity']] = v
    for params, q in by.items():
        kv = dict(x.split('=') for x in params.split(','))
        if kv['dp'] == '0': kv['dp'] = str(nr // (int(kv['tp']) * int(kv['pp'])))
        lay = f"L{kv['layers']} B{kv['batch']} dp{kv['dp']} tp{kv['tp']} pp{kv['pp']} {kv['schedule']} v{kv['v']} mb{kv['mb']} zero{kv['zero']} ckpt{kv['ckpt']}"
        cell = lambda v: f"{v['measured']:.0f} / {v['predicted']:.0f}" + ('' if v['status'] == 'PASS' else ' FAIL')
        traffic = [v for k, v in q.items() if k not in cats and not k.startswith('ranks')]
        tv = f"{sum(v['status']=='PASS' for v in traffic)}/{len(traffic)} PASS"
        r = q['ranks whose counts differ from the prediction']
        print(f"| {nr} | {lay} | " + ' | '.join(cell(q[c]) for c in cats) + f" | {tv} | {r['measured']:.0f} ({r['status']}) |")
