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

    @Test func tickStepsAreOneTwoOrFiveTimesAPowerOfTen() {
        #expect(SVGPlot.niceStep(1.0) == 0.2)
        #expect(SVGPlot.niceStep(240) == 50)
        #expect(SVGPlot.niceStep(0.15) == 0.05)
        #expect(SVGPlot.label(0.15, step: 0.05) == "0.15")
        #expect(SVGPlot.label(100, step: 50) == "100")
    }
}
