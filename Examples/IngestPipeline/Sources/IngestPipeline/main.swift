// An ingest pipeline on Sluice's public library: a source that cannot pause pushes records into
// a bounded buffer that spills to disk; the records are compressed on every core and written
// atomically to a gzip file while a subscriber prints progress; then the file is read back and
// checked against what was pushed.
//
// usage: IngestPipeline OUTPUT.gz [MEGABYTES]   (default 64)
import Foundation
import Sluice

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: IngestPipeline OUTPUT.gz [MEGABYTES]\n".utf8))
    exit(64)
}
let output = Pathname(arguments[1])
let megabytes = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64

do {
    let (report, producer) = try await ingest(size: Int64(megabytes) << 20, into: output)
    let pushed = producer.summary
    print("ingest: pushed \(pushed.bytes) bytes, CRC-32 \(pushed.crc)")
    print("ingest: wrote \(report.bytesWritten) bytes of gzip in \(report.duration)")

    let decoded = try await readBack(output)
    print("ingest: read back \(decoded.bytes) bytes, CRC-32 \(decoded.crc)")
    guard decoded.bytes == pushed.bytes, decoded.crc == pushed.crc else {
        FileHandle.standardError.write(Data("IngestPipeline: what was read back is not what was pushed\n".utf8))
        exit(1)
    }
} catch {
    FileHandle.standardError.write(Data("IngestPipeline: \(error)\n".utf8))
    exit(1)
}

// Chunk(_:) from an array copies with one memcpy, from outside the package too: the fastest of
// five rounds of 2,000 chunks of 64 KiB.
let bytes = [UInt8](repeating: 7, count: 64 << 10)
var copied = 0
let fastest = (0..<5).map { _ in
    ContinuousClock().measure { for _ in 0..<2_000 { copied &+= Chunk(bytes).count } }
}.min()!
let seconds = Double(fastest.components.seconds) + Double(fastest.components.attoseconds) / 1e18
print("ingest: Chunk([UInt8]) of 64 KiB: \(String(format: "%.1f", Double(2_000 << 16) / seconds / 1e9)) GB/s")
