import Sluice

/// What a command does with one source operand: transfer it, copy it as a tree, or pass over it.
enum OperandStep {
    case transfer(Transfer)
    /// `copy -r` / `-a`: the source (a directory or a file) copied into `destination` if that
    /// is a directory, else as it, with the tree options given; with `moves` (`--rm` across file
    /// systems), what was copied of it is removed once durable (``TreeMove``).
    case tree(destination: Pathname, options: Copier.TreeOptions, moves: Bool)
    /// Passed over, with the message to print (if any), as a failure or as a warning.
    case skip(message: String?, isFailure: Bool)
    /// `copy --rm` within one file system: moved by a rename already (`SourceRemoval.rename`), with the
    /// line to print (with `-v`), and the size of the regular file moved, which the totals no
    /// longer count (`nil`: a directory).
    case moved(message: String?, size: Int64?)
}

/// The exit status of a command over its operands, as `cp` and `gzip` give it: 1 if any failed,
/// else 2 if any warned, else 0; a closed output pipe or a signal stops at once.
struct OperandTally {
    private(set) var status = ExitStatus.success

    /// Counts one transfer's outcome.
    ///
    /// - Returns: the status to exit with at once (a closed output pipe, a signal), or `nil` to
    ///   go on with the next operand.
    mutating func record(_ outcome: Transfer.Outcome) -> Int32? {
        switch outcome {
        case .success(let warnings): if !warnings.isEmpty { warn() }
        case .failure: fail()
        case .brokenPipe: return ExitStatus.brokenPipe
        case .cancelled: return ExitStatus.interrupted
        }
        return nil
    }

    mutating func warn() {
        if status == ExitStatus.success { status = ExitStatus.warning }
    }

    mutating func fail() {
        status = ExitStatus.failure
    }
}
