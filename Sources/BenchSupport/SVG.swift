import Foundation
import IdpPrimitives
import IdpWireFormats

/// Two charts as one standalone SVG (no scripts, no external references): closed-loop latency
/// (p50 solid, p99 dashed) against flows in flight, and ns per call against threads for every
/// provider strategy and floor; and when the scaling section ran on more than one core count, a
/// third: speed-up over 1 core against cores. Every axis is logarithmic.
/// - Parameter report: The run's report.
/// - Returns: The SVG document.
package func renderSVG(_ report: BenchReport) -> String {
    let closed = report.flows.filter { $0.mode == "closed" }
    var latency: [Series] = []
    for scenario in orderedUnique(closed.map(\.scenario)) {
        let rows = closed.filter { $0.scenario == scenario }.sorted { $0.inFlight < $1.inFlight }
        latency.append(Series(name: "\(scenario) p50", points: rows.map { (Double($0.inFlight), $0.latencyUs.p50) }, dashed: false))
        latency.append(Series(name: "\(scenario) p99", points: rows.map { (Double($0.inFlight), $0.latencyUs.p99) }, dashed: true))
    }
    var perCall: [Series] = []
    for name in orderedUnique(report.floors.filter { !$0.isIdpOperation }.map(\.name)) {
        let rows = report.floors.filter { $0.name == name }.sorted { $0.threads < $1.threads }
        perCall.append(Series(name: floorLabel(name), points: rows.map { (Double($0.threads), $0.nsPerOp) }, dashed: true))
    }
    for name in orderedUnique(report.providers.map(\.strategy)) {
        let rows = report.providers.filter { $0.strategy == name }.sorted { $0.threads < $1.threads }
        perCall.append(Series(name: name, points: rows.map { (Double($0.threads), $0.nsPerCall) }, dashed: false))
    }
    let scaling = scalingSeries(report.scaling)
    let width = 1_000, chartHeight = 420
    let height = (scaling.isEmpty ? 2 * chartHeight + 40 : 3 * chartHeight + 80)
    var svg = """
    <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" font-family="sans-serif" font-size="12">
    <rect width="100%" height="100%" fill="white"/>

    """
    svg += chart(title: "End to end, closed loop: latency (µs) against flows in flight", xLabel: "flows in flight",
                 yLabel: "µs", series: latency, origin: (0, 0), size: (width, chartHeight))
    svg += chart(title: "provideCredentials: ns per call (all threads together) against threads", xLabel: "threads",
                 yLabel: "ns/call", series: perCall, origin: (0, chartHeight + 40), size: (width, chartHeight))
    if !scaling.isEmpty {
        svg += chart(title: "Scaling: speed-up over 1 core against cores (pinned child processes)", xLabel: "cores",
                     yLabel: "speed-up", series: scaling, origin: (0, 2 * chartHeight + 80), size: (width, chartHeight))
    }
    svg += "</svg>\n"
    return svg
}

/// The scaling chart's lines: each flow cell's throughput and each provider cell's aggregate
/// cost as speed-up over 1 core, and the ideal (speed-up = cores) dashed.
private func scalingSeries(_ rows: [ScalingRow]) -> [Series] {
    let rows = rows.sorted { $0.cores < $1.cores }
    guard let base = rows.first(where: { $0.cores == 1 }), rows.count > 1 else { return [] }
    var series = [Series(name: "ideal (speed-up = cores)", points: rows.map { (Double($0.cores), Double($0.cores)) }, dashed: true)]
    for cell in scalingFlowCells {
        let points = rows.compactMap { row in
            ScalingMath.speedUp(row.throughput(cell.scenario, inFlight: cell.inFlight), over: base.throughput(cell.scenario, inFlight: cell.inFlight))
                .map { (Double(row.cores), $0) }
        }
        if !points.isEmpty { series.append(Series(name: "\(cell.scenario), \(cell.inFlight) in flight", points: points, dashed: false)) }
    }
    for name in orderedUnique(rows.flatMap { $0.providers.map(\.name) }) {
        let points = rows.compactMap { row in ScalingMath.costSpeedUp(row.nsPerCall(name), over: base.nsPerCall(name)).map { (Double(row.cores), $0) } }
        if !points.isEmpty { series.append(Series(name: name, points: points, dashed: false)) }
    }
    return series
}

/// One line of a chart.
struct Series {
    var name: String
    var points: [(x: Double, y: Double)]
    var dashed: Bool
}

private let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                       "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]

/// One chart with log-log axes, ticks at powers of ten (and at each x value), and a legend on the right.
private func chart(title: String, xLabel: String, yLabel: String, series: [Series], origin: (x: Int, y: Int), size: (width: Int, height: Int)) -> String {
    let plot = (left: Double(origin.x + 70), top: Double(origin.y + 40), width: Double(size.width - 70 - 300), height: Double(size.height - 90))
    var out = "<text x=\"\(origin.x + 10)\" y=\"\(origin.y + 20)\" font-size=\"14\" font-weight=\"bold\">\(XMLEscaping.escape(title))</text>\n"
    let points = series.flatMap(\.points).filter { $0.x > 0 && $0.y > 0 }
    guard !points.isEmpty else {
        return out + "<text x=\"\(Int(plot.left + plot.width / 2))\" y=\"\(Int(plot.top + plot.height / 2))\" text-anchor=\"middle\">no data</text>\n"
    }
    let xs = (log10(points.map(\.x).min()!), log10(points.map(\.x).max()!))
    let ys = (floor(log10(points.map(\.y).min()!)), ceil(log10(points.map(\.y).max()!)))
    let xSpan = max(xs.1 - xs.0, 0.1), ySpan = max(ys.1 - ys.0, 1)
    func px(_ x: Double) -> Double { plot.left + (log10(x) - xs.0) / xSpan * plot.width }
    func py(_ y: Double) -> Double { plot.top + plot.height - (log10(y) - ys.0) / ySpan * plot.height }
    func f(_ value: Double) -> String { String(format: "%.1f", value) }

    out += "<rect x=\"\(f(plot.left))\" y=\"\(f(plot.top))\" width=\"\(f(plot.width))\" height=\"\(f(plot.height))\" fill=\"none\" stroke=\"#999\"/>\n"
    for exponent in stride(from: ys.0, through: ys.1, by: 1) {
        let y = py(pow(10, exponent))
        out += "<line x1=\"\(f(plot.left))\" y1=\"\(f(y))\" x2=\"\(f(plot.left + plot.width))\" y2=\"\(f(y))\" stroke=\"#eee\"/>\n"
        out += "<text x=\"\(f(plot.left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(XMLEscaping.escape(formatNumber(pow(10, exponent))))</text>\n"
    }
    for x in Set(points.map(\.x)).sorted() {
        out += "<text x=\"\(f(px(x)))\" y=\"\(f(plot.top + plot.height + 16))\" text-anchor=\"middle\">\(XMLEscaping.escape(formatNumber(x)))</text>\n"
    }
    out += "<text x=\"\(f(plot.left + plot.width / 2))\" y=\"\(f(plot.top + plot.height + 34))\" text-anchor=\"middle\">\(XMLEscaping.escape(xLabel))</text>\n"
    out += "<text x=\"\(origin.x + 14)\" y=\"\(f(plot.top + plot.height / 2))\" transform=\"rotate(-90 \(origin.x + 14) \(f(plot.top + plot.height / 2)))\" text-anchor=\"middle\">\(XMLEscaping.escape(yLabel))</text>\n"
    for (index, line) in series.enumerated() {
        let color = palette[index % palette.count]
        let visible = line.points.filter { $0.x > 0 && $0.y > 0 }
        let path = visible.map { "\(f(px($0.x))),\(f(py($0.y)))" }.joined(separator: " ")
        out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(line.dashed ? " stroke-dasharray=\"6 4\"" : "") points=\"\(path)\"><title>\(XMLEscaping.escape(line.name))</title></polyline>\n"
        let legendY = plot.top + 8 + Double(index) * 17
        out += "<line x1=\"\(f(plot.left + plot.width + 16))\" y1=\"\(f(legendY))\" x2=\"\(f(plot.left + plot.width + 40))\" y2=\"\(f(legendY))\" stroke=\"\(color)\" stroke-width=\"2\"\(line.dashed ? " stroke-dasharray=\"6 4\"" : "")/>\n"
        out += "<text x=\"\(f(plot.left + plot.width + 46))\" y=\"\(f(legendY + 4))\">\(XMLEscaping.escape(line.name))</text>\n"
    }
    return out
}
