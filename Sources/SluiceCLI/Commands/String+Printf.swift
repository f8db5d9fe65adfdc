#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// `value` as C's `printf(3)` formats it with `format`, which holds one conversion of a
    /// `double` (`%.1f`, `%5.1f%%`): rounded by the C library, as `gzip -l` and `awk` round.
    init(printf format: String, _ value: Double) {
        var capacity = 64
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let count = withVaList([value]) { arguments in
                buffer.withUnsafeMutableBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { vsnprintf($0.baseAddress, $0.count, format, arguments) }
                }
            }
            if count >= 0 && Int(count) < capacity {
                self = String(decoding: buffer.prefix(Int(count)), as: UTF8.self)
                return
            }
            capacity = count < 0 ? capacity * 2 : Int(count) + 1
        }
    }
}
