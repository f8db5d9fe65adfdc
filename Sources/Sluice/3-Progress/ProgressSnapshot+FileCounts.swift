extension ProgressSnapshot {
    /// Where an operation over many files stands: files done of the total, and the file an event
    /// is about. Carried by a ``ProgressSnapshot`` of such an operation (``ProgressSnapshot/files``).
    public struct FileCounts: Sendable, Hashable {
        /// Files finished so far, committed or failed.
        public var completed: Int
        /// Files that failed so far (included in ``completed``).
        public var failed: Int
        /// Files known to the operation so far.
        public var total: Int
        /// Whether ``total`` (and the snapshot's ``ProgressSnapshot/totalBytes``) may still grow:
        /// a walk is still finding files. The bar shows the total as "of >= ...".
        public var isTotalGrowing: Bool
        /// The file the snapshot is about: the one that just started or finished, as the user
        /// named it; `nil` when none is (the operation's last snapshot).
        public var current: Pathname?
        /// The index of ``current`` among the operation's files, from 0, in the order they were
        /// submitted.
        public var currentIndex: Int?
        /// The error of ``current`` when this snapshot reports its failure.
        public var currentError: String?

        /// Creates counts from their fields, as given.
        package init(
            completed: Int, failed: Int = 0, total: Int, isTotalGrowing: Bool = false, current: Pathname? = nil,
            currentIndex: Int? = nil, currentError: String? = nil
        ) {
            self.completed = completed
            self.failed = failed
            self.total = total
            self.isTotalGrowing = isTotalGrowing
            self.current = current
            self.currentIndex = currentIndex
            self.currentError = currentError
        }
    }
}
