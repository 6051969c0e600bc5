"""What a reader of a chart sees of its words, read in the browser: the texts of plotly charts that overprint
each other. Shared by the browser tests of the app's pages and of the room's audience page."""

# Every pair of words drawn in one visible chart whose boxes overlap by more than 3 px (a text box carries its
# line's spacing: two labels that merely touch overlap by a pixel or two). A box is the text's own, turned
# with it (a label at -90° or -60°), so the test is the separating-axis one of two turned rectangles.
# Returns [chart title, text, text, overlap in px].
OVERPRINTED = """() => {
  const corners = text => {
    const box = text.getBBox(), m = text.getScreenCTM();
    return [[box.x, box.y], [box.x + box.width, box.y], [box.x + box.width, box.y + box.height],
            [box.x, box.y + box.height]].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const overlap = (p, q) => {  // the least overlap along the rectangles' edge normals: <= 0 when apart
    let least = Infinity;
    for (const poly of [p, q]) for (let i = 0; i < 2; i++) {
      const [x0, y0] = poly[i], [x1, y1] = poly[i + 1], length = Math.hypot(x1 - x0, y1 - y0);
      if (!length) return 0;
      const normal = [-(y1 - y0) / length, (x1 - x0) / length];
      const along = points => points.map(([x, y]) => x * normal[0] + y * normal[1]);
      const a = along(p), b = along(q);
      least = Math.min(least, Math.min(Math.max(...a), Math.max(...b)) - Math.max(Math.min(...a), Math.min(...b)));
    }
    return least;
  };
  const found = [];
  document.querySelectorAll('.js-plotly-plot').forEach((plot, index) => {
    if (!plot.checkVisibility() || plot.getBoundingClientRect().height < 10) return;  // a closed expander's
    const title = (plot.querySelector('.gtitle') || {textContent: `chart ${index + 1}`}).textContent.slice(0, 60);
    const texts = [...plot.querySelectorAll('text')]
      .filter(text => text.textContent.trim() && text.getClientRects().length)
      .filter(text => text.checkVisibility({opacityProperty: true}))
      .map(text => [text.textContent.trim(), corners(text)]);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const depth = overlap(texts[i][1], texts[j][1]);
      if (depth > 3) found.push([title, texts[i][0], texts[j][0], Math.round(depth)]);
    }
  });
  return found;
}"""

# The titles of visible charts that do not fit inside their chart (a title is one line: plotly cuts nothing, the
# page does), each with how far it runs out on the left and on the right, in px.
CUT_TITLES = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(plot => plot.checkVisibility() && plot.getBoundingClientRect().height >= 10 && plot.querySelector('.gtitle'))
  .map(plot => {
    const chart = plot.querySelector('.main-svg').getBoundingClientRect();
    const title = plot.querySelector('.gtitle').getBoundingClientRect();
    return [plot.querySelector('.gtitle').textContent.slice(0, 60), chart.left - title.left, title.right - chart.right];
  })
  .filter(([text, left, right]) => left > 2 || right > 2)"""

# Visible charts whose margins plotly widened past those the server asked for (viz/margins.py): each such chart was
# drawn twice, the second time after its words had been measured. Sides whose words leave a 760 px chart (what a
# phone keeps for a wide one) or this one's height less than 64 px of plot are automargin's on purpose
# (viz.margins.fit_margins).
# Returns [chart title, side, asked, drawn].
WIDENED = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(plot => plot.checkVisibility() && plot._fullLayout && plot.layout.margin)
  .flatMap(plot => ['l', 'r', 't', 'b']
    .filter(side => plot._fullLayout._size[side] > (plot.layout.margin[side] ?? 0) + 0.5)
    .filter(side => {
      const size = plot._fullLayout._size;
      return 'lr'.includes(side) ? size.l + size.r <= 760 - 64 : size.t + size.b <= plot._fullLayout.height - 64;
    })
    .map(side => [(plot.layout.title && plot.layout.title.text || '').slice(0, 60), side,
                  plot.layout.margin[side], plot._fullLayout._size[side]]))"""

# Words of visible charts drawn past their chart's edges (a label cut off by the page), each with how far, in px.
CUT_WORDS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(plot => plot.checkVisibility() && plot.getBoundingClientRect().height >= 10)
  .flatMap(plot => {
    const chart = plot.querySelector('.main-svg').getBoundingClientRect();
    const title = (plot.querySelector('.gtitle') || {textContent: ''}).textContent.slice(0, 60);
    const words = '.xtick text, .ytick text, .cbaxis text, .legendtext, .g-xtitle text, .g-ytitle text';
    return [...plot.querySelectorAll(words)]
      .filter(text => text.textContent.trim() && text.checkVisibility())
      .map(text => [text, text.getBoundingClientRect()])
      .map(([text, box]) => [title, text.textContent.trim().slice(0, 30), Math.round(Math.max(
        chart.left - box.left, box.right - chart.right, chart.top - box.top, box.bottom - chart.bottom))])
      .filter(([, , out]) => out > 1);
  })"""
