// Charts drawn as SVG, no chart library: bars per day (one series, or two stacked), with the figures
// as text for screen readers (the figure's label and a table beside it, visually hidden).
export interface Bar {
  label: string;
  values: number[];
}

const WIDTH = 640;
const HEIGHT = 180;
const PAD = { top: 16, right: 8, bottom: 34, left: 64 };

const short = (value: number) => (value >= 1_000_000 ? `${(value / 1_000_000).toFixed(1)}M` : value >= 1000 ? `${(value / 1000).toFixed(1)}k` : String(Math.round(value * 100) / 100));

export function BarChart({ title, bars, series, colors }: { title: string; bars: Bar[]; series: string[]; colors: string[] }) {
  const totals = bars.map((bar) => bar.values.reduce((sum, value) => sum + value, 0));
  const max = Math.max(1, ...totals);
  const innerWidth = WIDTH - PAD.left - PAD.right;
  const innerHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = innerWidth / Math.max(1, bars.length);
  const barWidth = Math.max(2, step * 0.7);
  const y = (value: number) => PAD.top + innerHeight - (value / max) * innerHeight;
  const sums = series.map((_, index) => bars.reduce((sum, bar) => sum + (bar.values[index] ?? 0), 0));
  const summary = `${title}: ${series.map((name, index) => `${name} ${short(sums[index])} in all`).join(', ')}; highest day ${short(max)}.`;
  const labelEvery = Math.ceil(bars.length / 5);
  return (
    <figure className="chart">
      <figcaption>
        <strong>{title}</strong>
        {series.length > 1 && (
          <span className="chart-legend">
            {series.map((name, index) => (
              <span key={name}>
                <span className="swatch" style={{ background: colors[index] }} aria-hidden="true" /> {name}
              </span>
            ))}
          </span>
        )}
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary} className="chart-svg">
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(0)} y2={y(0)} className="chart-axis" />
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max)} y2={y(max)} className="chart-grid" />
        <text x={PAD.left - 8} y={y(max) + 6} textAnchor="end" className="chart-text">
          {short(max)}
        </text>
        <text x={PAD.left - 8} y={y(0) + 6} textAnchor="end" className="chart-text">
          0
        </text>
        {bars.map((bar, index) => {
          let base = 0;
          const x = PAD.left + index * step + (step - barWidth) / 2;
          return (
            <g key={bar.label}>
              {bar.values.map((value, part) => {
                const top = y(base + value);
                const height = y(base) - top;
                base += value;
                return value > 0 ? (
                  <rect key={part} x={x} y={top} width={barWidth} height={height} fill={colors[part]}>
                    <title>{`${bar.label}: ${series[part]} ${short(value)}`}</title>
                  </rect>
                ) : null;
              })}
              {index % labelEvery === 0 && (
                <text x={x + barWidth / 2} y={HEIGHT - 8} textAnchor="middle" className="chart-text">
                  {bar.label.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <table className="visually-hidden">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {series.map((name) => (
              <th scope="col" key={name}>
                {name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {bars.map((bar) => (
            <tr key={bar.label}>
              <th scope="row">{bar.label}</th>
              {bar.values.map((value, index) => (
                <td key={index}>{value}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
