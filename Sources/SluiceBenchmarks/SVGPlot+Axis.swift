#if canImport(Glibc)
import Glibc
#endif

extension SVGPlot {
    /// One axis of a plot: its title, its scale and how its ticks are labelled.
    public struct Axis: Sendable {
        /// How values map to positions along the axis.
        public enum Scale: Sendable {
            /// From 0 to a round maximum, ticks at 1, 2 or 5 × 10^k apart.
            case linear
            /// Base 2, from the power of 2 at or below the smallest value to the one at or above
            /// the largest, ticks at powers of 2 (every other one, or fewer, past 10 ticks);
            /// values of 0 or less cannot be placed and are left out.
            case logarithmic
        }

        /// How tick values are written.
        public enum Labels: Sendable {
            /// As numbers, with as many decimals as the tick step needs.
            case number
            /// As byte counts in binary units: `512`, `4K`, `64K`, `1M`, `2G`.
            case bytes
        }

        /// The axis's title, drawn beside it.
        public var title: String
        /// The axis's scale.
        public var scale: Scale
        /// How its ticks are labelled.
        public var labels: Labels
        /// The smallest upper end a linear axis gets, however small its values (so a plot of
        /// zeros still has a scale); ignored by a logarithmic axis.
        public var leastUpperBound: Double

        /// Creates an axis.
        public init(title: String, scale: Scale = .linear, labels: Labels = .number, leastUpperBound: Double = 1) {
            self.title = title
            self.scale = scale
            self.labels = labels
            self.leastUpperBound = leastUpperBound
        }

        /// Seconds since the run started, linear: the memory plot's x axis.
        public static let seconds = Axis(title: "seconds", leastUpperBound: 0.001)
        /// Resident memory in MiB, linear: the memory plot's y axis.
        public static let residentMebibytes = Axis(title: "resident memory (MiB)")
        /// Bytes per chunk, logarithmic, labelled in binary units: the chunk-size plot's x axis.
        public static let chunkBytes = Axis(title: "chunk size (bytes)", scale: .logarithmic, labels: .bytes)
        /// Throughput in MiB per second, linear: the chunk-size plot's y axis.
        public static let mebibytesPerSecond = Axis(title: "throughput (MiB/s)")
    }

    /// An axis fitted to the values it must show: the range it spans, where a value falls
    /// within it, and its ticks.
    struct AxisLayout {
        let axis: Axis
        /// The range drawn: `lower` at one end of the axis, `upper` at the other.
        let lower: Double
        let upper: Double
        /// Tick values, in increasing order, with their labels.
        let ticks: [(value: Double, label: String)]

        /// Fits `axis` to `values` (only the positive ones on a logarithmic axis).
        init(_ axis: Axis, values: [Double]) {
            self.axis = axis
            switch axis.scale {
            case .linear:
                let maximum = max(values.max() ?? 1, axis.leastUpperBound)
                let step = SVGPlot.niceStep(maximum)
                let upper = (maximum / step).rounded(.up) * step
                var ticks: [(Double, String)] = []
                var tick = 0.0
                while tick <= upper + step / 2 {
                    ticks.append((tick, AxisLayout.label(tick, step: step, labels: axis.labels)))
                    tick += step
                }
                (lower, self.upper, self.ticks) = (0, upper, ticks)
            case .logarithmic:
                let positive = values.filter { $0 > 0 }
                var low = (positive.min() ?? 1).binaryExponentBelow
                var high = (positive.max() ?? 1).binaryExponentAbove
                if low == high { (low, high) = (low - 1, high + 1) }
                let stride = max(1, (high - low + 9) / 10)
                let ticks = Swift.stride(from: low, through: high, by: stride).map { exponent in
                    let value = Double(sign: .plus, exponent: exponent, significand: 1)
                    return (value, AxisLayout.label(value, step: value, labels: axis.labels))
                }
                (lower, upper, self.ticks) = (Double(sign: .plus, exponent: low, significand: 1),
                    Double(sign: .plus, exponent: high, significand: 1), ticks)
            }
        }

        /// Where `value` falls between the ends of the axis: 0 at `lower`, 1 at `upper`; `nil`
        /// for a value a logarithmic axis cannot place (0 or less).
        func fraction(_ value: Double) -> Double? {
            switch axis.scale {
            case .linear:
                return (value - lower) / (upper - lower)
            case .logarithmic:
                guard value > 0 else { return nil }
                return (log2(value) - log2(lower)) / (log2(upper) - log2(lower))
            }
        }

        /// A tick's label: a number with as many decimals as `step` needs (0.05 → 2), or a byte
        /// count in binary units.
        static func label(_ value: Double, step: Double, labels: Axis.Labels) -> String {
            switch labels {
            case .number:
                return SVGPlot.label(value, step: step)
            case .bytes:
                let bytes = value.rounded()
                guard bytes == value, abs(bytes) < 0x1p62 else { return CSVWriter.format(value, digits: 0) }
                return BinaryUnits.abbreviation(Int64(bytes))
            }
        }
    }
}

extension Double {
    /// The largest power-of-2 exponent whose power is at most the value (a positive value).
    fileprivate var binaryExponentBelow: Int { Int(exponent) }

    /// The smallest power-of-2 exponent whose power is at least the value (a positive value).
    fileprivate var binaryExponentAbove: Int { significand == 1 ? Int(exponent) : Int(exponent) + 1 }
}
