// A source that cannot pause pushes records into a bounded buffer that spills to disk past its
// capacity; the records are compressed on every core and written atomically to a gzip file,
// while a subscriber prints progress. Then the file is read back and checked.
//
// usage: IngestPipeline OUTPUT.gz [MEGABYTES]   (default 64)
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import Synchronization

let arguments = CommandLine.arguments
guard arguments.count >= 2, let output = arguments.dropFirst().first else {
    FileHandle.standardError.write(Data("usage: IngestPipeline OUTPUT.gz [MEGABYTES]\n".utf8))
    exit(64)
}
let megabytes = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let size = Int64(megabytes) << 20

// The source: a thread that pushes log-like records of 64 KiB and never waits.
let producer = LineProducer(size: size, chunkSize: 64 << 10)
let records = PushBuffer<Chunk>.fromCallbacks(
    capacity: 16, byteBudget: 1 << 20, policy: .spill(directory: Pathname(NSTemporaryDirectory()), limit: size)
) { deliver, complete in
    producer.start(deliver: deliver, complete: complete)
    return { producer.stop() }
}

// The pipeline: records -> gzip on every core -> a file replaced atomically at the commit.
var sinkOptions = FileSink.Options()
sinkOptions.replacesExisting = true  // a new run replaces the last one's file, atomically
let sink: FileSink
do { sink = try await FileSink.create(at: Pathname(output), options: sinkOptions) } catch {
    FileHandle.standardError.write(Data("IngestPipeline: \(error)\n".utf8))
    exit(1)
}
let pipeline = FileCopy(from: records, to: sink, totalBytes: size, transform: { ParallelGzipEncoder() })
let updates = pipeline.progress.subscribe()  // before run(): no snapshot missed
let printer = Task {
    var lastPercent = -25
    for await snapshot in updates {
        let percent = Int((snapshot.fraction ?? 0) * 100)
        if snapshot.isFinal {
            print("ingest: done, \(snapshot.bytesCompleted) bytes")
        } else if percent / 25 != lastPercent / 25 {
            print("ingest: \(percent)% (\(snapshot.bytesCompleted) bytes)")
            lastPercent = percent
        }
    }
}
let report = try await pipeline.run()
await printer.value

// Read the file back through the decoder and compare what came out with what went in.
let compressed = try await FileChunks.open(Pathname(output))
var decoder = GzipDecoder()
let readBack = ReadBack()
for try await chunk in compressed { try await decoder.process(chunk, emit: readBack.add) }
let trailer = try await decoder.finish(emit: readBack.add)
let (decoded, decodedBytes) = readBack.value

let pushed = producer.summary
print("ingest: pushed \(pushed.bytes) bytes, CRC-32 \(String(pushed.crc.value, radix: 16))")
print("ingest: wrote \(report.bytesWritten) bytes of gzip in \(report.duration)")
print("ingest: read back \(decodedBytes) bytes, CRC-32 \(String(decoded.value, radix: 16)) (the trailer's: \(String(trailer.crc32 ?? 0, radix: 16)))")

// Chunk(_:) from an array copies with one memcpy, from outside the package too.
let bytes = [UInt8](repeating: 7, count: 64 << 10)
let clock = ContinuousClock()
var copied = 0
let elapsed = clock.measure { for _ in 0..<2_000 { copied &+= Chunk(bytes).count } }
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print("ingest: Chunk([UInt8]) of 64 KiB, 2,000 times: \(String(format: "%.1f", Double(copied) / seconds / 1e9)) GB/s")

exit(pushed.bytes == decodedBytes && pushed.crc.value == decoded.value ? 0 : 1)

/// The CRC-32 and count of the bytes a decoder emits.
final class ReadBack: Sendable {
    private let state = Mutex((crc: CRC32(), bytes: Int64(0)))

    func add(_ chunk: Chunk) {
        state.withLock { state in
            chunk.withUnsafeBytes { state.crc.update($0) }
            state.bytes += Int64(chunk.count)
        }
    }

    var value: (CRC32, Int64) { state.withLock { ($0.crc, $0.bytes) } }
}
