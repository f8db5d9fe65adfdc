/// Draws memory over time as a standalone SVG: one panel per consumer, one line per design
/// (resident set size in MiB against seconds), labelled axes, a legend.
public enum SVGPlot {
    /// One line to draw.
    public struct Series: Sendable {
        /// The legend's label.
        public var label: String
        /// Which panel it belongs to.
        public var panel: String
        /// Points as (seconds, MiB).
        public var points: [(Double, Double)]

        /// Creates a series.
        public init(label: String, panel: String, points: [(Double, Double)]) {
            self.label = label
            self.panel = panel
            self.points = points
        }
    }

    static let colors = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]

    /// The SVG document.
    ///
    /// - Parameters:
    ///   - series: the lines; panels appear in the order of first appearance.
    ///   - title: the heading above the panels.
    public static func svg(_ series: [Series], title: String) -> String {
        var panels: [String] = []
        for item in series where !panels.contains(item.panel) { panels.append(item.panel) }
        var labels: [String] = []
        for item in series where !labels.contains(item.label) { labels.append(item.label) }
        let panelWidth = 460.0, panelHeight = 300.0, left = 60.0, top = 50.0, gap = 40.0
        let width = left + Double(panels.count) * (panelWidth + gap) + 10
        let height = top + panelHeight + 100
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="15">\(escape(title))</text>

            """
        for (index, panel) in panels.enumerated() {
            let x0 = left + Double(index) * (panelWidth + gap)
            let lines = series.filter { $0.panel == panel }
            let maxX = max(lines.flatMap { $0.points.map(\.0) }.max() ?? 1, 0.001)
            let maxY = max(lines.flatMap { $0.points.map(\.1) }.max() ?? 1, 1)
            let (xStep, yStep) = (niceStep(maxX), niceStep(maxY))
            let xMax = (maxX / xStep).rounded(.up) * xStep
            let yMax = (maxY / yStep).rounded(.up) * yStep
            func px(_ x: Double) -> Double { x0 + x / xMax * panelWidth }
            func py(_ y: Double) -> Double { top + panelHeight - y / yMax * panelHeight }
            out += "<text x=\"\(f(x0 + panelWidth / 2))\" y=\"\(f(top - 10))\" text-anchor=\"middle\" font-size=\"13\">\(escape(panel))</text>\n"
            var tick = 0.0
            while tick <= yMax + yStep / 2 {
                out += "<line x1=\"\(f(x0))\" y1=\"\(f(py(tick)))\" x2=\"\(f(x0 + panelWidth))\" y2=\"\(f(py(tick)))\" stroke=\"#e5e5e5\"/>\n"
                out += "<text x=\"\(f(x0 - 6))\" y=\"\(f(py(tick) + 4))\" text-anchor=\"end\">\(label(tick, step: yStep))</text>\n"
                tick += yStep
            }
            tick = 0
            while tick <= xMax + xStep / 2 {
                out += "<text x=\"\(f(px(tick)))\" y=\"\(f(top + panelHeight + 16))\" text-anchor=\"middle\">\(label(tick, step: xStep))</text>\n"
                tick += xStep
            }
            out += "<rect x=\"\(f(x0))\" y=\"\(f(top))\" width=\"\(f(panelWidth))\" height=\"\(f(panelHeight))\" fill=\"none\" stroke=\"#333\"/>\n"
            out += "<text x=\"\(f(x0 + panelWidth / 2))\" y=\"\(f(top + panelHeight + 34))\" text-anchor=\"middle\">seconds</text>\n"
            out += "<text transform=\"translate(\(f(x0 - 44)),\(f(top + panelHeight / 2))) rotate(-90)\" text-anchor=\"middle\">resident memory (MiB)</text>\n"
            for line in lines {
                let color = colors[(labels.firstIndex(of: line.label) ?? 0) % colors.count]
                let points = line.points.map { "\(f(px($0.0))),\(f(py($0.1)))" }.joined(separator: " ")
                out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(points)\"/>\n"
            }
        }
        for (index, label) in labels.enumerated() {
            let x = left + Double(index % 4) * 170
            let y = top + panelHeight + 60 + Double(index / 4) * 18
            let color = colors[index % colors.count]
            out += "<line x1=\"\(f(x))\" y1=\"\(f(y - 4))\" x2=\"\(f(x + 24))\" y2=\"\(f(y - 4))\" stroke=\"\(color)\" stroke-width=\"3\"/>\n"
            out += "<text x=\"\(f(x + 30))\" y=\"\(f(y))\">\(escape(label))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// A step of 1, 2 or 5 × 10^k giving about five ticks.
    static func niceStep(_ range: Double) -> Double {
        let raw = range / 5
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw { magnitude /= 10 }
        for factor in [1.0, 2.0, 5.0, 10.0] where magnitude * factor >= raw { return magnitude * factor }
        return magnitude * 10
    }

    /// A tick label with as many decimals as the step needs (0.05 → 2).
    static func label(_ value: Double, step: Double) -> String {
        var digits = 0
        var scaled = step
        while digits < 6 && abs(scaled - scaled.rounded()) > 1e-9 {
            scaled *= 10
            digits += 1
        }
        return CSVWriter.format(value, digits: digits)
    }

    static func f(_ value: Double) -> String { CSVWriter.format(value, digits: 1) }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
