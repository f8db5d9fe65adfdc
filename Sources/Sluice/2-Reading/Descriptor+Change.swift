extension Descriptor {
    /// What changed in this file since `opened`, its status when it was opened, by `fstat(2)`
    /// now (``FileStatus/changes(to:)``): the check a copy makes after its last read, as gzip
    /// ("file size changed while zipping") and tar ("file changed as we read it") do.
    ///
    /// `nil` when nothing did, when the file is not a regular file (a pipe, a device), when the
    /// `fstat(2)` fails, and for the files of /proc and /sys, whose sizes and times mean nothing
    /// (C13: `/proc/version` has size 0).
    func change(since opened: FileStatus, system: SystemCalls) -> String? {
        guard opened.kind == .regular, case .success(let now) = system.status(rawValue),
            let changes = opened.changes(to: FileStatus(now))
        else { return nil }
        if let type = try? fileSystemType(system: system), type == .proc || type == .sysfs { return nil }
        return changes
    }
}
