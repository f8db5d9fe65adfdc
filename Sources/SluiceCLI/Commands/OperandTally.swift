import Sluice

/// What a command does with one source operand: transfer it, or pass over it.
enum OperandStep {
    case transfer(Transfer)
    /// Passed over, with the message to print (if any), as a failure or as a warning.
    case skip(message: String?, isFailure: Bool)
}

/// The exit status of a command over its operands, as `cp` and `gzip` give it: 1 if any failed,
/// else 2 if any warned, else 0; a closed output pipe or a signal stops at once.
struct OperandTally {
    private(set) var status = ExitStatus.success

    /// Runs each of `sources`, in order, through the step `plan` gives it (decided when its
    /// turn comes, after the previous transfers), and returns the command's exit status.
    ///
    /// Several file operands go through one ``OperandBatch`` (many files at once); one operand
    /// runs alone, with the progress and messages of one file.
    static func run(_ sources: [Pathname], options: CommonOptions, verb: String, plan: (Pathname) -> OperandStep) async -> Int32 {
        if sources.count > 1 { return await OperandBatch.run(sources, options: options, verb: verb, plan: plan) }
        var tally = OperandTally()
        for source in sources {
            switch plan(source) {
            case .transfer(let transfer):
                if let status = tally.record(await transfer.run(options: options)) { return status }
            case .skip(let message, let isFailure):
                if let message { Console.message(message) }
                if isFailure { tally.fail() } else { tally.warn() }
            }
        }
        return tally.status
    }

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
