import Sluice
import SluiceBenchmarks

/// One thing `sluice bench` measures: a reference command or a design with a consumer at a
/// chunk size. Each runs once per round, in a child process of its own; its counted runs are
/// summarised by their median.
enum BenchSubject: Hashable, Sendable {
    /// `cp SRC DST`.
    case cp
    /// `cat SRC > DST`.
    case cat
    /// `dd if=SRC of=DST bs=<chunkBytes> status=none`: the chunk-size sweep's reference.
    case dd(chunkBytes: Int)
    /// A design with a consumer, reading and writing chunks of `chunkBytes`, in a
    /// `sluice bench-run` child.
    case design(BenchmarkDesign, BenchmarkConsumer, chunkBytes: Int)

    /// Everything `plan` measures, in the order of the first round: `cp`, `cat`, each design
    /// with each consumer at the plan's chunk size, then for each size of the sweep
    /// `bounded-pull` and `unbounded-stream` with the fast consumer and `dd`. A subject is listed
    /// once even if both parts ask for it (`bounded-pull` with the fast consumer at the plan's
    /// chunk size).
    static func all(for plan: BenchCommand.Plan) -> [BenchSubject] {
        var subjects: [BenchSubject] = [.cp, .cat]
        for design in plan.designs {
            for consumer in plan.consumers { subjects.append(.design(design, consumer, chunkBytes: plan.chunkSize)) }
        }
        for chunkBytes in plan.chunkSizes {
            for subject in sweep(at: chunkBytes) where !subjects.contains(subject) { subjects.append(subject) }
        }
        return subjects
    }

    /// The lines of the chunk-size sweep at one size.
    static func sweep(at chunkBytes: Int) -> [BenchSubject] {
        [.design(.boundedPull, .fast, chunkBytes: chunkBytes), .design(.unboundedStream, .fast, chunkBytes: chunkBytes),
         .dd(chunkBytes: chunkBytes)]
    }

    /// The order of `subjects` in round `round` (the warm-up is round 0): as listed in even
    /// rounds, reversed in odd ones, so that no subject always runs right after the same one
    /// (a page cache or CPU frequency left behind by its neighbour is shared out).
    static func order(_ subjects: [BenchSubject], round: Int) -> [BenchSubject] {
        round % 2 == 0 ? subjects : subjects.reversed()
    }

    /// The progress bar's name for it: `cp`, `dd bs=4K`, `bounded-pull / fast`, with the chunk
    /// size when it differs from the plan's.
    func label(planChunkSize: Int) -> String {
        switch self {
        case .cp: return "cp"
        case .cat: return "cat"
        case .dd(let chunkBytes): return "dd bs=\(BinaryUnits.abbreviation(Int64(chunkBytes)))"
        case .design(let design, let consumer, let chunkBytes):
            let size = chunkBytes == planChunkSize ? "" : ", \(BinaryUnits.abbreviation(Int64(chunkBytes))) chunks"
            return "\(design.rawValue) / \(consumer.rawValue)\(size)"
        }
    }

    /// For a reference command: its name in the CSV, and the `/bin/sh -c` script that runs it
    /// on the input `$1` and the output `$2` (positional parameters: no path is ever quoted
    /// into the script). `nil` for a design.
    var reference: (command: String, script: String, chunkBytes: Int?)? {
        switch self {
        case .cp: ("cp", #"cp "$1" "$2""#, nil)
        case .cat: ("cat", #"cat "$1" > "$2""#, nil)
        case .dd(let chunkBytes): ("dd", #"dd if="$1" of="$2" bs=\#(chunkBytes) status=none"#, chunkBytes)
        case .design: nil
        }
    }
}
