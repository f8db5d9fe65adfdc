/// Draws line plots as standalone SVG: one panel per group of series, one line per label, in
/// the colour of that label in every panel and every plot (``color(for:)``: each design and
/// reference command has its own), labelled axes, a legend of one entry per line of text
/// (so that no entry runs into another, however long its label). A series that failed is drawn
/// dashed, with `failed` at its end and in the legend; one whose row had some runs fail says
/// how many in the legend. `sluice bench` draws two: resident
/// memory over time (linear axes, one panel per consumer) and throughput against chunk size
/// (a logarithmic x axis).
public enum SVGPlot {
    /// One line to draw.
    public struct Series: Sendable {
        /// The legend's label.
        public var label: String
        /// Which panel it belongs to.
        public var panel: String
        /// Points as (x, y), in the axes' units: (seconds, MiB) on the memory plot.
        public var points: [(Double, Double)]
        /// Whether the run failed (a capacity error, an error): drawn dashed and labelled.
        public var failed: Bool
        /// Of the runs the series stands for, how many failed (the series is then the median of
        /// the others), and how many there were; said in the legend when not 0.
        public var failedRuns: (count: Int, of: Int)

        /// Creates a series.
        public init(
            label: String, panel: String, points: [(Double, Double)], failed: Bool = false, failedRuns: Int = 0, of runs: Int = 0
        ) {
            self.label = label
            self.panel = panel
            self.points = points
            self.failed = failed
            self.failedRuns = (failedRuns, runs)
        }

        /// What the legend says of it beside its label, or `nil`: `failed`, or `2 of 5 runs failed`.
        var note: String? {
            if failed { return "failed" }
            return failedRuns.count > 0 ? "\(failedRuns.count) of \(failedRuns.of) runs failed" : nil
        }
    }

    static let colors = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]

    /// The labels with a colour of their own, in the order of ``colors``: the designs, then the
    /// reference commands.
    static let knownLabels = BenchmarkDesign.allCases.map(\.rawValue) + ["dd", "cp", "cat"]

    /// The colour of `label` in every plot: its own for a design or reference command, else one
    /// of the palette chosen by the label's bytes (the same on every run).
    static func color(for label: String) -> String {
        if let index = knownLabels.firstIndex(of: label), index < colors.count { return colors[index] }
        let hash = label.utf8.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }
        return colors[Int(hash % UInt32(colors.count))]
    }

    /// The SVG document.
    ///
    /// - Parameters:
    ///   - series: the lines; panels appear in the order of first appearance, each fitted to its
    ///     own points.
    ///   - title: the heading above the panels.
    ///   - x: the horizontal axis; seconds by default.
    ///   - y: the vertical axis; resident memory in MiB by default.
    ///   - marksPoints: whether each point also gets a dot (for lines of a few points).
    public static func svg(
        _ series: [Series], title: String, x: Axis = .seconds, y: Axis = .residentMebibytes, marksPoints: Bool = false
    ) -> String {
        var panels: [String] = []
        for item in series where !panels.contains(item.panel) { panels.append(item.panel) }
        var labels: [String] = []
        for item in series where !labels.contains(item.label) { labels.append(item.label) }
        let panelWidth = 460.0, panelHeight = 300.0, left = 60.0, top = 50.0, gap = 40.0
        let legend = labels.map { label in (label, legendText(label, series.filter { $0.label == label })) }
        let legendTop = top + panelHeight + 60
        // As wide as the panels, or as the widest entry (its line, then its text) at the widest
        // a character of the font can be.
        let widest = legend.map { left + legendLineWidth + estimatedWidth(of: $0.1) }.max() ?? 0
        let width = max(left + Double(panels.count) * (panelWidth + gap) + 10, widest + 10)
        let height = legendTop + Double(legend.count) * legendRowHeight + 10
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="15">\(escape(title))</text>

            """
        for (index, panel) in panels.enumerated() {
            out += panelSVG(
                series.filter { $0.panel == panel }, titled: panel, x0: left + Double(index) * (panelWidth + gap),
                frame: (top: top, width: panelWidth, height: panelHeight), axes: (x, y), marksPoints: marksPoints)
        }
        for (index, (label, text)) in legend.enumerated() {
            let (x, y) = (left, legendTop + Double(index) * legendRowHeight)
            let dash = series.contains { $0.label == label && $0.failed } ? " stroke-dasharray=\"6,4\"" : ""
            out += "<line x1=\"\(f(x))\" y1=\"\(f(y - 4))\" x2=\"\(f(x + 24))\" y2=\"\(f(y - 4))\" stroke=\"\(color(for: label))\" stroke-width=\"3\"\(dash)/>\n"
            out += "<text x=\"\(f(x + legendLineWidth))\" y=\"\(f(y))\">\(escape(text))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// The legend's rows: one per label, 18 px apart (the font is 12 px).
    static let legendRowHeight = 18.0
    /// From an entry's start to its text: its line (24 px) and a gap.
    static let legendLineWidth = 30.0

    /// A label's entry: the label, then what its series' notes say, each with its panels:
    /// `push-fail (failed: slow consumer; 2 of 5 runs failed: fast consumer)`.
    static func legendText(_ label: String, _ series: [Series]) -> String {
        var notes: [(note: String, panels: [String])] = []
        for item in series {
            guard let note = item.note else { continue }
            if let index = notes.firstIndex(where: { $0.note == note }) {
                notes[index].panels.append(item.panel)
            } else {
                notes.append((note, [item.panel]))
            }
        }
        guard !notes.isEmpty else { return label }
        return label + " (" + notes.map { "\($0.note): " + $0.panels.joined(separator: ", ") }.joined(separator: "; ") + ")"
    }

    /// About the most `text` can take in pixels at the SVG's 12 px sans-serif: 0.8 em a
    /// character, 1 em for `m`, `w`, `M`, `W`, `%` and `@` (DejaVu Sans, which `rsvg-convert`
    /// draws with on Debian, averages about 0.6 em on these labels).
    static func estimatedWidth(of text: String) -> Double {
        text.reduce(0) { width, character in width + ("mwMW%@".contains(character) ? 12 : 9.6) }
    }

    /// One panel: its title, grid, ticks, frame, axis titles and lines, at `x0` from the left.
    private static func panelSVG(
        _ lines: [Series], titled panel: String, x0: Double, frame: (top: Double, width: Double, height: Double),
        axes: (x: Axis, y: Axis), marksPoints: Bool
    ) -> String {
        let (top, panelWidth, panelHeight) = frame
        let (x, y) = axes
        var out = ""
        let xAxis = AxisLayout(x, values: lines.flatMap { $0.points.map(\.0) })
        let yAxis = AxisLayout(y, values: lines.flatMap { $0.points.map(\.1) })
        func px(_ value: Double) -> Double? { xAxis.fraction(value).map { x0 + $0 * panelWidth } }
        func py(_ value: Double) -> Double? { yAxis.fraction(value).map { top + panelHeight - $0 * panelHeight } }
        out += "<text x=\"\(f(x0 + panelWidth / 2))\" y=\"\(f(top - 10))\" text-anchor=\"middle\" font-size=\"13\">\(escape(panel))</text>\n"
        for tick in yAxis.ticks {
            guard let y = py(tick.value) else { continue }
            out += "<line x1=\"\(f(x0))\" y1=\"\(f(y))\" x2=\"\(f(x0 + panelWidth))\" y2=\"\(f(y))\" stroke=\"#e5e5e5\"/>\n"
            out += "<text x=\"\(f(x0 - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(escape(tick.label))</text>\n"
        }
        for tick in xAxis.ticks {
            guard let x = px(tick.value) else { continue }
            out += "<text x=\"\(f(x))\" y=\"\(f(top + panelHeight + 16))\" text-anchor=\"middle\">\(escape(tick.label))</text>\n"
        }
        out += "<rect x=\"\(f(x0))\" y=\"\(f(top))\" width=\"\(f(panelWidth))\" height=\"\(f(panelHeight))\" fill=\"none\" stroke=\"#333\"/>\n"
        out += "<text x=\"\(f(x0 + panelWidth / 2))\" y=\"\(f(top + panelHeight + 34))\" text-anchor=\"middle\">\(escape(x.title))</text>\n"
        out += "<text transform=\"translate(\(f(x0 - 44)),\(f(top + panelHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(escape(y.title))</text>\n"
        for line in lines {
            let color = color(for: line.label)
            let placed = line.points.compactMap { point in px(point.0).flatMap { x in py(point.1).map { (x, $0) } } }
            let points = placed.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            let dash = line.failed ? " stroke-dasharray=\"6,4\"" : ""
            out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dash) points=\"\(points)\"/>\n"
            if marksPoints {
                for (x, y) in placed { out += "<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"3\" fill=\"\(color)\"/>\n" }
            }
            if line.failed, let end = placed.last {
                out += "<text x=\"\(f(end.0 + 4))\" y=\"\(f(end.1 - 4))\" fill=\"\(color)\">failed</text>\n"
            }
        }
        return out
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
