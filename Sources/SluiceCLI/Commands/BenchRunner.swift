#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Sluice
import SluiceBenchmarks

/// Carries out a ``BenchCommand/Plan``: makes the input, then runs every ``BenchSubject`` once
/// per round in a child process (`cp`, `cat` and `dd` through `/bin/sh`, each design in a
/// `sluice bench-run` child), round 0 a warm-up that is discarded, the order reversed from one
/// round to the next; prints the table, the ratios and the chunk-size sweep's summary, and
/// writes `bench.csv`, `memory.svg` and, with a sweep, `chunk-sizes.svg`.
struct BenchRunner {
    var plan: BenchCommand.Plan

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The files one benchmark works with, in a scratch directory it removes at the end.
    struct Workspace {
        var directory: Pathname
        var input: Pathname
        var output: Pathname
        var executable: String
        var progress: BenchProgress
    }

    /// The counted runs of every subject, in the order each subject ran.
    struct Results {
        var designs: [BenchSubject: [BenchmarkRun]] = [:]
        var references: [BenchSubject: [ReferenceRun]] = [:]
    }

    /// Runs the whole benchmark and writes its results.
    ///
    /// - Returns: 0.
    /// - Throws: ``Failure`` or a system error when the input, a reference command or the
    ///   results cannot be written; a design's run that fails is recorded, not thrown.
    func run() async throws -> Int32 {
        try makeDirectory(plan.out)
        let directory = try makeTemporaryDirectory(in: plan.out)
        defer { removeTree(directory) }
        let subjects = BenchSubject.all(for: plan)
        let work = Workspace(
            directory: directory, input: directory.appending("input.bin"), output: directory.appending("output.bin"),
            executable: try selfExecutable(), progress: BenchProgress(total: subjects.count * (plan.runs + 1) + 1))

        work.progress.begin("writing a \(ProgressDisplay.formatBytes(plan.size)) input")
        try writeInput(work.input, size: plan.size)
        work.progress.end()
        Console.writeError(announcement())

        let results = try await measure(subjects, work)
        work.progress.finish()

        // Each design with each consumer: its counted runs, their figures those that succeeded.
        let rows = plan.designs.flatMap { design in
            plan.consumers.compactMap { consumer in
                results.designs[.design(design, consumer, chunkBytes: plan.chunkSize)].map(BenchmarkRow.init)
            }
        }
        var referenceMedians: [String: Double] = [:]
        for subject in [BenchSubject.cp, .cat] {
            if let runs = results.references[subject], let name = subject.reference?.command {
                referenceMedians[name] = runs.map(\.seconds).median
            }
        }
        Console.writeOutput(summary(rows, references: referenceMedians))
        let sweep = plan.chunkSizes.isEmpty ? nil : chunkSizeSweep(results)
        if let sweep { printSweep(sweep) }
        try writeResults(subjects: subjects, results: results, rows: rows, sweep: sweep)
        return ExitStatus.success
    }

    /// The line on standard error that says what is measured and how.
    private func announcement() -> String {
        var text = "sluice bench: \(ProgressDisplay.formatBytes(plan.size)) input, \(plan.runs.counted("counted run"))"
            + " each (median), chunk \(ProgressDisplay.formatBytes(Int64(plan.chunkSize))), "
            + "capacity \(plan.capacity(chunkBytes: plan.chunkSize)), slow consumer \(ProgressDisplay.formatBytes(plan.sinkRate))/s"
        if !plan.chunkSizes.isEmpty {
            text += "; chunk sizes \(plan.chunkSizes.map { BinaryUnits.abbreviation(Int64($0)) }.joined(separator: ", ")) "
                + "against dd"
        }
        return text + "; writes without fsync (--no-fsync semantics)\n"
    }

    /// Runs every subject once per round: round 0 is the warm-up, rounds 1 through `runs` are
    /// counted; odd rounds go through the subjects in reverse.
    ///
    /// - Throws: ``Failure`` when a reference command fails (the comparison would be void); a
    ///   child that cannot be started.
    private func measure(_ subjects: [BenchSubject], _ work: Workspace) async throws -> Results {
        var results = Results()
        for round in 0...plan.runs {
            for subject in BenchSubject.order(subjects, round: round) {
                work.progress.begin(
                    "\(subject.label(planChunkSize: plan.chunkSize)) \(round == 0 ? "warm-up" : "run \(round)/\(plan.runs)")")
                if case .design(let design, let consumer, let chunkBytes) = subject {
                    let result = try await ChildProcess.run(
                        work.executable, childArguments(design, consumer, chunkBytes: chunkBytes, work), scratch: work.directory)
                    removeFile(work.output)
                    work.progress.end()
                    if round > 0 {
                        results.designs[subject, default: []].append(benchmarkRun(design, consumer, chunkBytes, result))
                    }
                } else if let reference = subject.reference {
                    let result = try await ChildProcess.run(
                        "/bin/sh", ["-c", reference.script, "sh", "\(work.input)", "\(work.output)"], scratch: work.directory)
                    removeFile(work.output)
                    work.progress.end()
                    guard result.status == 0 else {
                        throw Failure(description: "\(reference.command) failed: \(result.standardError)")
                    }
                    if round > 0 {
                        results.references[subject, default: []].append(ReferenceRun(
                            command: reference.command, bytesMoved: plan.size, seconds: result.seconds,
                            chunkBytes: reference.chunkBytes, cpuSeconds: result.cpuSeconds))
                    }
                }
            }
        }
        return results
    }

    /// The command line of a `sluice bench-run` child.
    private func childArguments(
        _ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, chunkBytes: Int, _ work: Workspace
    ) -> [String] {
        [
            "bench-run", "--design", design.rawValue, "--consumer", consumer.rawValue,
            "--input", "\(work.input)", "--output", "\(work.output)", "--sink-rate", "\(plan.sinkRate)",
            "--chunk-size", "\(chunkBytes)", "--capacity", "\(plan.capacity(chunkBytes: chunkBytes))", "--spill-dir", "\(work.directory)",
        ]
    }

    /// What one child reported, or, when it could not report, its failure with no bytes claimed;
    /// with the child's wall time and CPU time as this process measured them.
    private func benchmarkRun(
        _ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, _ chunkBytes: Int, _ result: ChildProcess.Result
    ) -> BenchmarkRun {
        guard result.status == 0, var run = try? JSONDecoder().decode(BenchmarkRun.self, from: Data(result.standardOutput.utf8)) else {
            let message = result.standardError.split(separator: "\n").last.map(String.init) ?? "exit status \(result.status)"
            // The child could not say what it moved: nothing is claimed.
            return BenchmarkRun(
                design: design, consumer: consumer, bytesMoved: 0, seconds: result.seconds,
                peakResidentBytes: result.peakResidentBytes, peakBufferedBytes: 0, outcome: .error(message), samples: [],
                chunkBytes: chunkBytes, cpuSeconds: result.cpuSeconds)
        }
        // Wall time from spawn to exit, as for cp and cat: what a user waits for.
        run.seconds = result.seconds
        // CPU time of the whole child, from wait4: the child cannot count its own exit.
        run.cpuSeconds = result.cpuSeconds
        // The child's own high-water mark (VmHWM at exit). wait4's ru_maxrss on that child is
        // kept for children that could not report: after posix_spawn it also counts this
        // process's peak (see ChildProcess).
        if run.peakResidentBytes <= 0 { run.peakResidentBytes = result.peakResidentBytes }
        return run
    }

    /// The sweep's medians: the counted runs of its designs and of `dd` at each of its sizes.
    private func chunkSizeSweep(_ results: Results) -> ChunkSizeSweep {
        let subjects = plan.chunkSizes.flatMap(BenchSubject.sweep(at:))
        return ChunkSizeSweep(
            runs: subjects.flatMap { results.designs[$0] ?? [] },
            references: subjects.flatMap { results.references[$0] ?? [] })
    }

    /// Writes `bench.csv` (every counted run: the reference commands first, then the designs,
    /// each subject's runs together), `memory.svg` (the medians' memory over time) and, with a
    /// sweep, `chunk-sizes.svg` (throughput against chunk size).
    private func writeResults(
        subjects: [BenchSubject], results: Results, rows: [BenchmarkRow], sweep: ChunkSizeSweep?
    ) throws {
        let csvPath = plan.out.appending("bench.csv")
        let memoryPath = plan.out.appending("memory.svg")
        try write(
            CSVWriter.csv(
                for: subjects.flatMap { results.designs[$0] ?? [] }, references: subjects.flatMap { results.references[$0] ?? [] }),
            to: csvPath)
        // The median run of each row: of its successes, dashed when all failed, noted when some did.
        let series = rows.compactMap { row in
            row.median.map { run in
                SVGPlot.Series(
                    label: run.design.rawValue, panel: "\(run.consumer.rawValue) consumer",
                    points: run.samples.map { ($0.seconds, Double($0.residentBytes) / 1_048_576) }, failed: row.allFailed,
                    failedRuns: row.allFailed ? 0 : row.failureCount, of: row.runs.count)
            }
        }
        try write(SVGPlot.svg(series, title: "Resident memory over time, \(ProgressDisplay.formatBytes(plan.size)) input"), to: memoryPath)
        guard let sweep else {
            Console.writeOutput("\nwrote \(csvPath) and \(memoryPath)\n")
            return
        }
        let sweepPath = plan.out.appending("chunk-sizes.svg")
        let title = "Throughput against chunk size, \(ProgressDisplay.formatBytes(plan.size)) input"
        try write(
            SVGPlot.svg(
                sweep.plotSeries(panel: "fast consumer, median of \(plan.runs)"), title: title,
                x: .chunkBytes, y: .mebibytesPerSecond, marksPoints: true),
            to: sweepPath)
        Console.writeOutput("\nwrote \(csvPath), \(memoryPath) and \(sweepPath)\n")
    }
}
