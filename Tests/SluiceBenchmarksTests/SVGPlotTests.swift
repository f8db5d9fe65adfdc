import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Sluice
@testable import SluiceBenchmarks
import Testing

@Suite struct SVGPlotTests {
    @Test func plotIsWellFormedXMLWithAxesAndLegend() throws {
        let series = [
            SVGPlot.Series(label: "unbounded-stream", panel: "slow consumer", points: [(0, 20), (0.5, 240), (1.2, 30)]),
            SVGPlot.Series(label: "bounded-pull", panel: "slow consumer", points: [(0, 20), (0.5, 26), (1.2, 26)]),
            SVGPlot.Series(label: "bounded-pull", panel: "fast consumer", points: [(0, 20), (0.1, 26)]),
        ]
        let svg = SVGPlot.svg(series, title: "Resident memory <over> time & more")
        let document = try XMLDocument(xmlString: svg)
        #expect(document.rootElement()?.name == "svg")
        let polylines = try document.nodes(forXPath: "//*[local-name()='polyline']")
        #expect(polylines.count == 3)
        #expect(svg.contains("seconds"))
        #expect(svg.contains("resident memory (MiB)"))
        #expect(svg.contains(">unbounded-stream</text>"))
        #expect(svg.contains(">bounded-pull</text>"))
        #expect(svg.contains("&lt;over&gt; time &amp; more"))
    }

    /// One colour per design in every plot, whatever the other lines of the plot: the memory
    /// plot (four designs) and the chunk-size plot (two designs and dd) draw `bounded-pull` alike.
    @Test func aDesignHasOneColourInEveryPlot() throws {
        let memory = SVGPlot.svg(
            BenchmarkDesign.allCases.map { SVGPlot.Series(label: $0.rawValue, panel: "fast consumer", points: [(0, 1), (1, 2)]) },
            title: "memory")
        let sweep = SVGPlot.svg(
            ["dd", "unbounded-stream", "bounded-pull"].map { SVGPlot.Series(label: $0, panel: "fast", points: [(4096.0, 1.0), (1_048_576.0, 2.0)]) },
            title: "sweep", x: .chunkBytes, y: .mebibytesPerSecond)
        func strokes(_ svg: String) throws -> [String] {
            try XMLDocument(xmlString: svg).nodes(forXPath: "//*[local-name()='polyline']/@stroke").compactMap(\.stringValue)
        }
        let memoryColours = try strokes(memory)
        let sweepColours = try strokes(sweep)
        #expect(Set(memoryColours).count == BenchmarkDesign.allCases.count)
        #expect(sweepColours[2] == memoryColours[BenchmarkDesign.allCases.firstIndex(of: .boundedPull)!])
        #expect(sweepColours[1] == memoryColours[BenchmarkDesign.allCases.firstIndex(of: .unboundedStream)!])
        #expect(!memoryColours.contains(sweepColours[0]))
    }

    /// A run that failed is drawn (dashed, in its design's colour) and labelled `failed`, on
    /// the line and in the legend.
    @Test func aFailedRunIsDrawnAndLabelledAsFailed() throws {
        let svg = SVGPlot.svg([
            SVGPlot.Series(label: "push-fail", panel: "slow consumer", points: [(0, 20), (0.4, 30)], failed: true),
            SVGPlot.Series(label: "push-fail", panel: "fast consumer", points: [(0, 20), (0.1, 22)]),
        ], title: "memory")
        let document = try XMLDocument(xmlString: svg)
        let dashed = try document.nodes(forXPath: "//*[local-name()='polyline'][@stroke-dasharray]")
        #expect(dashed.count == 1)
        #expect(svg.contains(">failed</text>"))
        #expect(svg.contains(">push-fail (failed: slow consumer)</text>"))
    }

    @Test func tickStepsAreOneTwoOrFiveTimesAPowerOfTen() {
        #expect(SVGPlot.niceStep(1.0) == 0.2)
        #expect(SVGPlot.niceStep(240) == 50)
        #expect(SVGPlot.niceStep(0.15) == 0.05)
        #expect(SVGPlot.label(0.15, step: 0.05) == "0.15")
        #expect(SVGPlot.label(100, step: 50) == "100")
    }

    /// The x coordinates of each polyline of `svg`, in the order drawn.
    static func polylineXs(_ svg: String) throws -> [[Double]] {
        let document = try XMLDocument(xmlString: svg)
        return try document.nodes(forXPath: "//*[local-name()='polyline']/@points").map { node in
            let points = try #require(node.stringValue)
            return try points.split(separator: " ").map { pair in try #require(Double(pair.split(separator: ",")[0])) }
        }
    }

    /// Throughput against chunk size: on a logarithmic x axis, larger chunks lie further right,
    /// and sizes 16 times apart lie equal distances apart, from the frame's left edge (4K) to its
    /// right edge (1M).
    @Test func logarithmicXAxisPlacesLargerChunksFurtherRightAtEqualStepsPerFactor() throws {
        let series = [
            SVGPlot.Series(label: "bounded-pull", panel: "fast consumer", points: [(4096, 200), (65536, 900), (1_048_576, 1300)]),
            SVGPlot.Series(label: "unbounded-stream", panel: "fast consumer", points: [(4096, 150), (65536, 700), (1_048_576, 1100)]),
            SVGPlot.Series(label: "dd", panel: "fast consumer", points: [(4096, 600), (65536, 1000), (1_048_576, 1000)]),
        ]
        let svg = SVGPlot.svg(
            series, title: "Throughput against chunk size", x: .chunkBytes, y: .mebibytesPerSecond, marksPoints: true)
        let document = try XMLDocument(xmlString: svg)
        #expect(document.rootElement()?.name == "svg")
        #expect(try document.nodes(forXPath: "//*[local-name()='circle']").count == 9)
        let lines = try Self.polylineXs(svg)
        #expect(lines.count == 3)
        for xs in lines {
            #expect(xs.count == 3)
            #expect(zip(xs, xs.dropFirst()).allSatisfy { $0 < $1 }, "\(xs)")
            let (first, second) = (xs[1] - xs[0], xs[2] - xs[1])
            #expect(abs(first - second) < 0.15, "\(xs)")
            #expect(xs.first == 60 && xs.last == 520, "\(xs)")
        }
        for label in ["4K", "8K", "64K", "512K", "1M"] { #expect(svg.contains(">\(label)</text>"), "\(label)") }
        #expect(svg.contains(">chunk size (bytes)</text>"))
        #expect(svg.contains(">throughput (MiB/s)</text>"))
        #expect(!svg.contains("resident memory"))
    }

    /// A logarithmic axis spans whole powers of 2 around its values (at least one factor of 2
    /// either side of a single value), cannot place 0, and keeps to about ten ticks.
    @Test func logarithmicAxisSpansPowersOfTwoAndLeavesOutWhatItCannotPlace() {
        let single = SVGPlot.AxisLayout(.chunkBytes, values: [0, 4096])
        #expect(single.lower == 2048 && single.upper == 8192)
        #expect(single.fraction(0) == nil)
        #expect(single.fraction(4096) == 0.5)
        #expect(single.ticks.map(\.label) == ["2K", "4K", "8K"])
        let uneven = SVGPlot.AxisLayout(.chunkBytes, values: [3000, 100_000])
        #expect(uneven.lower == 2048 && uneven.upper == 131_072)
        let wide = SVGPlot.AxisLayout(.chunkBytes, values: [1, 1_073_741_824])
        #expect(wide.ticks.count <= 11)
        #expect(wide.ticks.first?.label == "1" && wide.ticks.last?.label == "1G")
        #expect(zip(wide.ticks, wide.ticks.dropFirst()).allSatisfy { $0.value < $1.value })
    }
}

/// The legend never overlaps, whatever its labels' lengths: one entry per row, each row below
/// the panels and the last, the plot wide enough for the widest entry at the widest a
/// character of its font is (before: entries at fixed x positions 170 px apart, so
/// `push-fail (failed: fast consumer, slow consumer)` ran into `push-spill`).
@Suite struct SVGLegendTests {
    @Test(arguments: [4, 60, 400])
    func legendEntriesNeverOverlap(labelLength: Int) throws {
        let long = String(repeating: "W", count: labelLength)
        var series: [SVGPlot.Series] = []
        for consumer in ["fast consumer", "slow consumer"] {
            series.append(.init(label: "unbounded-stream", panel: consumer, points: [(0, 20), (1, 240)]))
            series.append(.init(label: "push-fail", panel: consumer, points: [(0, 20), (0.1, 26)], failed: true))
            series.append(.init(label: "push-spill", panel: consumer, points: [(0, 20), (1, 26)], failedRuns: 2, of: 5))
            series.append(.init(label: long, panel: consumer, points: [(0, 20), (1, 30)]))
        }
        let svg = SVGPlot.svg(series, title: "memory")
        let document = try XMLDocument(xmlString: svg)
        func number(_ node: XMLNode, _ path: String) throws -> Double {
            try #require(try node.nodes(forXPath: path).first?.stringValue.flatMap(Double.init), "\(path)")
        }
        let width = try number(document, "/*/@width")
        let height = try number(document, "/*/@height")
        // The legend's texts: those after the last panel's, one per label.
        let texts = try document.nodes(forXPath: "//*[local-name()='text']").compactMap { $0 as? XMLElement }
        let legend = Array(texts.suffix(4))
        #expect(legend.map { $0.stringValue ?? "" } == [
            "unbounded-stream", "push-fail (failed: fast consumer, slow consumer)",
            "push-spill (2 of 5 runs failed: fast consumer, slow consumer)", long,
        ])
        // Each entry's box: its line 30 px before its text, its text at most 1 em (12 px) a
        // character wide, 12 px high above its baseline.
        let boxes = try legend.map { element in
            let (x, y) = (try number(element, "@x"), try number(element, "@y"))
            return (x0: x - 30, x1: x + 12 * Double((element.stringValue ?? "").count), y0: y - 12, y1: y + 3)
        }
        for (first, second) in zip(boxes, boxes.dropFirst()) { #expect(first.y1 <= second.y0, "\(first) \(second)") }
        // Below every panel (300 px high from 50, its tick labels and axis title under it).
        #expect(boxes.allSatisfy { $0.y0 >= 50 + 300 + 36 })
        // Inside the plot, at the widest a character is in most of these labels (0.8 em).
        for (box, element) in zip(boxes, legend) {
            let text = element.stringValue ?? ""
            let estimate = box.x0 + 30 + text.reduce(0) { $0 + ("mwMW%@".contains($1) ? 12 : 9.6) }
            #expect(estimate <= width && box.y1 <= height, "\(text): \(box), plot \(width)×\(height)")
        }
    }
}
