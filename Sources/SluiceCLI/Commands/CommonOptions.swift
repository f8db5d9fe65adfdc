import Sluice

/// The options every command takes (`cp`, `gzip`, `zstd` and `pv` conventions).
struct CommonOptions {
    var force = false
    var synchronize = true
    var preserve = false
    var chunkSize = FileChunks.defaultChunkSize
    var capacity = 4
    var progress = ProgressMode.none
    var quiet = false
    var verbose = false
    var help = false
    var version = false

    var sinkOptions: FileSink.Options {
        FileSink.Options(overwrite: force, synchronize: synchronize, preserveAttributes: preserve)
    }

    /// Applies `item` if it is a common option.
    ///
    /// - Returns: whether it was one.
    /// - Throws: ``UsageError`` for a bad value (`--capacity 0`, `--chunk-size 0`, ...).
    mutating func apply(_ item: ArgumentScanner.Item, _ scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch item {
        case .short("f"), .long("force", nil): force = true
        case .short("q"), .long("quiet", nil): quiet = true
        case .short("v"), .long("verbose", nil): verbose = true
        case .short("h"), .long("help", nil): help = true
        case .long("version", nil): version = true
        case .long("no-fsync", nil): synchronize = false
        case .long("preserve", nil): preserve = true
        case .long("progress", nil):
            // `--progress json` would copy a file named `json`: a mistake far more often than not.
            if scanner.upcoming == "json" {
                throw UsageError("--progress takes its value after '=': write --progress=json (a file named json: ./json)")
            }
            progress = .human
        case .long("progress", let value?):
            guard value == "json" else {
                throw UsageError("invalid value '\(value)' for --progress (--progress alone, or --progress=json)")
            }
            progress = .json
        case .long("chunk-size", let attached):
            let size = try parseSize(try scanner.value(for: "--chunk-size", attached: attached), option: "--chunk-size")
            guard size >= 1 else { throw UsageError("--chunk-size must be at least 1 byte") }
            guard size <= 1 << 30 else { throw UsageError("--chunk-size must be at most 1G") }
            chunkSize = Int(size)
        case .long("capacity", let attached):
            let text = try scanner.value(for: "--capacity", attached: attached)
            guard let value = Int(text), value >= 1, value <= 1 << 20 else {
                throw UsageError("invalid value '\(text)' for --capacity (expected a count of chunks, at least 1)")
            }
            capacity = value
        default:
            return false
        }
        return true
    }
}
