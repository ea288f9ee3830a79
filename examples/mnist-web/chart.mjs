// A dependency-free canvas chart: the running training loss (blue, left axis) and the test
// accuracy at each evaluation (orange dots, right axis 0-100%), against the step number.
export function drawChart(canvas, { losses, accuracies, totalSteps }) {
  const g = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 40;
  g.clearRect(0, 0, w, h);
  g.fillStyle = "#fff";
  g.fillRect(0, 0, w, h);
  g.strokeStyle = "#888";
  g.strokeRect(pad, 10, w - 2 * pad, h - pad - 10);
  const maxLoss = Math.max(2.5, ...losses);
  const x = (step) => pad + ((w - 2 * pad) * step) / Math.max(1, totalSteps);
  const yLoss = (l) => h - pad - ((h - pad - 10) * l) / maxLoss;
  const yAcc = (a) => h - pad - (h - pad - 10) * a;
  g.fillStyle = "#333";
  g.font = "11px sans-serif";
  g.fillText(`loss (max ${maxLoss.toFixed(1)})`, 2, 10);
  g.fillText("accuracy 100%", w - pad - 40, 10);
  g.fillText(`step ${totalSteps}`, w - pad - 30, h - pad + 14);
  g.strokeStyle = "#1f77b4";
  g.beginPath();
  losses.forEach((l, i) => (i === 0 ? g.moveTo(x(i + 1), yLoss(l)) : g.lineTo(x(i + 1), yLoss(l))));
  g.stroke();
  g.fillStyle = "#ff7f0e";
  for (const { step, accuracy } of accuracies) {
    g.beginPath();
    g.arc(x(step), yAcc(accuracy), 4, 0, 2 * Math.PI);
    g.fill();
  }
}
