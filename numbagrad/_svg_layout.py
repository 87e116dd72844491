"""A layered SVG drawing of a small DAG, for graph pictures when Graphviz is not installed.

Boxes are ranked by their longest distance from an output, so every arrow points down
(outputs at the bottom, as ``dot`` draws torchviz graphs); within a rank they are ordered by
the mean position of their neighbours (the barycentre heuristic, which removes most
crossings), then placed horizontally as near their neighbours' centres as the boxes allow.
Arrows are cubic curves from the bottom of the producer to the top of the consumer; an arrow
spanning several ranks may pass behind a box, which ``dot`` would route around.
"""

import html
import itertools

CHAR_W = 7.3  # advance of a 12 px monospace glyph; text width is estimated, not measured
LINE_H = 15
PAD_X, PAD_Y = 9, 6
GAP_X, GAP_Y = 18, 38
MARGIN = 10
_ORDER_SWEEPS = 4
_PLACE_SWEEPS = 6
_ids = itertools.count()


def render(boxes, edges):
    """SVG text. ``boxes``: (lines, fill colour, dashed outline, tooltip) per box;
    ``edges``: (producer, consumer) box indices, the graph acyclic."""
    n = len(boxes)
    producers = [[] for _ in range(n)]
    consumers = [[] for _ in range(n)]
    for u, v in edges:
        producers[v].append(u)
        consumers[u].append(v)
    rank = _ranks(producers, consumers)
    top = max(rank, default=0)
    row_of = [top - r for r in rank]
    width = [max(len(s) for s in lines) * CHAR_W + 2 * PAD_X for lines, *_ in boxes]
    height = [len(lines) * LINE_H + 2 * PAD_Y for lines, *_ in boxes]
    # An arrow crossing rows passes through a point per row it crosses (a box of no size), so
    # that ordering and placement keep it between the boxes there, as dot does.
    chains = []
    for u, v in edges:
        chain = [u]
        for r in range(row_of[u] + 1, row_of[v]):
            chain.append(len(row_of))
            row_of.append(r)
            width.append(0.0)
            height.append(0.0)
        chain.append(v)
        chains.append(chain)
    producers = [[] for _ in row_of]
    consumers = [[] for _ in row_of]
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            producers[b].append(a)
            consumers[a].append(b)
    rows = [[] for _ in range(top + 1)]
    for i, r in enumerate(row_of):
        rows[r].append(i)
    _order(rows, row_of, producers, consumers)
    x = _place(rows, width, producers, consumers)
    y, row_top, row_bottom = [0.0] * len(row_of), [], []
    t = MARGIN
    for row in rows:
        row_h = max(height[i] for i in row)
        for i in row:
            y[i] = t + (row_h - height[i]) / 2
        row_top.append(t)
        row_bottom.append(t + row_h)
        t += row_h + GAP_Y
    total_w = max(x[i] + width[i] / 2 for i in range(len(x))) + MARGIN
    paths = [_route(chain, x, y, height, row_of, row_top, row_bottom) for chain in chains]
    return _svg(boxes, paths, x, y, width, height, total_w, t - GAP_Y + MARGIN)


def _route(chain, x, y, height, row_of, row_top, row_bottom):
    """SVG path data of one arrow: curves between rows, straight down through the rows it
    crosses."""
    u, v = chain[0], chain[-1]
    px, py = x[u], y[u] + height[u]
    d = [f"M{px:.1f},{py:.1f}"]

    def curve(qx, qy):
        dy = (qy - py) / 2
        d.append(f"C{px:.1f},{py + dy:.1f} {qx:.1f},{qy - dy:.1f} {qx:.1f},{qy:.1f}")

    for k in chain[1:-1]:
        curve(x[k], row_top[row_of[k]])
        px, py = x[k], row_bottom[row_of[k]]
        d.append(f"L{px:.1f},{py:.1f}")
    curve(x[v], y[v])
    return " ".join(d)


def _ranks(producers, consumers):
    """Longest distance of each box from a box without consumers (an output)."""
    rank = [0] * len(producers)
    left = [len(c) for c in consumers]
    ready = [i for i, k in enumerate(left) if k == 0]
    while ready:
        v = ready.pop()
        for u in producers[v]:
            rank[u] = max(rank[u], rank[v] + 1)
            left[u] -= 1
            if left[u] == 0:
                ready.append(u)
    return rank


def _order(rows, row_of, producers, consumers):
    """Reorder each row, in place, by the mean position of its neighbours in the rows above
    (downward sweeps) or below (upward sweeps)."""
    pos = [0.0] * len(row_of)

    def number(row):
        for k, i in enumerate(row):
            pos[i] = k - (len(row) - 1) / 2  # centred, so rows of any length compare

    for row in rows:
        number(row)
    for sweep in range(_ORDER_SWEEPS):
        down = sweep % 2 == 0
        for r in (range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)):
            def key(i, r=r, down=down):
                near = [j for j in (producers[i] + consumers[i])
                        if (row_of[j] < r if down else row_of[j] > r)]
                return sum(pos[j] for j in near) / len(near) if near else pos[i]
            rows[r].sort(key=key)
            number(rows[r])


def _place(rows, width, producers, consumers):
    """Centre x of each box: rows keep their order and gaps, and each box sits as close to
    its neighbours' mean centre as that allows (least squares, solved per row exactly)."""
    x = [0.0] * len(width)
    for row in rows:
        _fit(row, [0.0] * len(row), width, x)
    for sweep in range(_PLACE_SWEEPS):
        for row in (rows if sweep % 2 == 0 else rows[::-1]):
            want = []
            for i in row:
                near = producers[i] + consumers[i]
                want.append(sum(x[j] for j in near) / len(near) if near else x[i])
            _fit(row, want, width, x)
    left = min(x[i] - width[i] / 2 for i in range(len(x)))
    return [xi - left + MARGIN for xi in x]


def _fit(row, want, width, x):
    """Minimise sum (x_i - want_i)^2 subject to the boxes of ``row`` not overlapping, in
    order. With offsets c_i (each box's minimum distance from the first), y_i = x_i - c_i
    must be non-decreasing: isotonic regression, solved by pooling adjacent violators."""
    offset, c = [], 0.0
    for k, i in enumerate(row):
        if k:
            c += (width[row[k - 1]] + width[i]) / 2 + GAP_X
        offset.append(c)
    blocks = []  # [sum of targets, count], means non-decreasing
    for w, c in zip(want, offset):
        blocks.append([w - c, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            s, m = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += m
    k = 0
    for s, m in blocks:
        for _ in range(m):
            x[row[k]] = s / m + offset[k]
            k += 1


def _svg(boxes, paths, x, y, width, height, total_w, total_h):
    arrow = f"ng-arrow-{next(_ids)}"  # ids are global to a notebook page: one per picture
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" '
           f'height="{total_h:.0f}" viewBox="0 0 {total_w:.1f} {total_h:.1f}" '
           'font-family="monospace" font-size="12">',
           f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="10" refY="5" '
           'markerWidth="7" markerHeight="7" orient="auto">'
           '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    for d in paths:
        out.append(f'<path class="edge" d="{d}" fill="none" stroke="#555" '
                   f'marker-end="url(#{arrow})"/>')
    for i, (lines, fill, dashed, tooltip) in enumerate(boxes):
        left = x[i] - width[i] / 2
        dash = ' stroke-dasharray="4,3"' if dashed else ""
        out.append(f'<g class="node"><title>{html.escape(str(tooltip))}</title>'
                   f'<rect x="{left:.1f}" y="{y[i]:.1f}" width="{width[i]:.1f}" '
                   f'height="{height[i]:.1f}" rx="4" fill="{fill}" stroke="#333"{dash}/>')
        for k, line in enumerate(lines):
            weight = ' font-weight="bold"' if k == 0 else ""
            baseline = y[i] + PAD_Y + (k + 1) * LINE_H - 4
            out.append(f'<text x="{x[i]:.1f}" y="{baseline:.1f}" text-anchor="middle"'
                       f'{weight}>{html.escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
