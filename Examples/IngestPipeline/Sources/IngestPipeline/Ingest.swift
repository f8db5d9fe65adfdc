import Foundation
import Sluice

/// Pushes `size` bytes of log lines from a source that cannot pause, compresses them on every
/// core and writes them atomically to `output`, printing progress at every quarter.
///
/// - Returns: the copy's report (`bytesWritten` is the gzip file's size) and what the source
///   pushed.
func ingest(size: Int64, into output: Pathname) async throws -> (CopyReport, LineProducer) {
    // 1. The source: a thread that pushes records of 64 KiB and never waits. Past 16 chunks
    //    (or 1 MiB) in memory, the buffer spills them to a file, up to `size` bytes, and fails
    //    loudly past that: nothing is dropped.
    let producer = LineProducer(size: size, chunkSize: 64 << 10)
    let records = PushBuffer<Chunk>.fromCallbacks(
        capacity: 16, byteBudget: 1 << 20, policy: .spill(directory: Pathname(NSTemporaryDirectory()), limit: size)
    ) { deliver, complete in
        producer.start(deliver: deliver, complete: complete)
        return { producer.stop() }
    }

    // 2. The destination: a temporary file beside `output`, renamed over it at the commit, so
    //    a reader sees the old file or the whole new one, never a part.
    var sinkOptions = FileSink.Options()
    sinkOptions.replacesExisting = true
    let sink = try await FileSink.create(at: output, options: sinkOptions)

    // 3. The pipeline: records -> gzip on every core -> the file. The pipeline gives the
    //    transform a thread of its own and bounds every channel between the stages.
    let pipeline = Pipeline(from: records, to: sink, totalBytes: size, transform: { ParallelGzipEncoder() })

    // 4. Progress: subscribe before `run()`, so no snapshot is missed; a slow subscriber sees
    //    the newest snapshot and never slows the copy.
    let updates = pipeline.progress.subscribe()
    let printer = Task {
        var lastQuarter = -1
        for await snapshot in updates {
            let percent = Int((snapshot.fraction ?? 0) * 100)
            if snapshot.isFinal {
                print("ingest: done, \(snapshot.bytesCompleted) bytes")
            } else if percent / 25 != lastQuarter {
                print("ingest: \(percent)% (\(snapshot.bytesCompleted) bytes)")
                lastQuarter = percent / 25
            }
        }
    }
    let report = try await pipeline.run()
    await printer.value
    return (report, producer)
}
