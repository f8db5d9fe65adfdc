import Testing
@testable import Sluice
import SluiceTestSupport

/// `follow --state`'s durable points through the crash-state explorer (issue 57): a first run
/// that ships a live file (a durable point after every chunk of 512 bytes) through a rotation
/// (rename and create, or copytruncate; raw or `-z`) and dies at a durable point (its state's
/// rename fails, after the destination was written and made durable); the writer writes on (and,
/// renaming, rotates again); then a restart takes the state up as the command does (lock, open
/// appending, cut back, resume from the checkpoint) and ships the rest. In every crash state of
/// the whole trace (``violations(in:returned:_:)``): a state at its name that parses records the
/// destination, which holds at least the recorded length, whose first bytes are (decompressed,
/// complete members, with `-z`) exactly the writer's bytes up to the recorded checkpoint, in
/// order, each once; without a state (or with an empty one) nothing was shipped; once the
/// restart returned, the destination holds every byte once.
///
/// The followed files are the writer's: they live in `log/`, beside the recorder's root `out/`
/// (the destination `dest` and the state `state`), so the writer's own writes, renames and
/// truncations stay out of the trace (the recorder leaves out what is outside its root) and
/// the replay of the trace still reaches what is on disk under the root. What is promised of
/// them is only what the rule reads: their bytes, in the order the writer wrote them.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct FollowCrashStateTests {
    enum Rotation: String { case renameAndCreate = "rename", copytruncate }

    static let chunkSize = 512
    /// The state whose rename fails in the first run: the first record, then one per chunk,
    /// so the sixth chunk's (in the file that came with the rotation) is not recorded.
    static let failingStore = 7

    /// One run of bytes of the writer: a generation (for a copytruncate, the file before its
    /// truncation and after it are two), its bytes, and where they start in all that was written.
    struct Segment: Sendable {
        var identity: FileIdentity
        var content: [UInt8]
        var start: Int
    }

    /// What the rule compares each crash state with.
    struct Expected: Sendable {
        var followed: Pathname
        var destination: Pathname
        var identity: FileIdentity
        var destinationNode: Int
        var compressed: Bool
        var segments: [Segment]
        /// Every byte the writer wrote, in order.
        var stream: [UInt8]
    }

    struct Unshippable: Error {
        var reason: String
    }

    // MARK: Scenarios

    @Test(arguments: [Rotation.renameAndCreate, .copytruncate], [false, true])
    func followAndRestart(_ rotation: Rotation, compressed: Bool) async throws {
        let recorded = try await Self.record(rotation, compressed: compressed)
        CrashStateTests.expectHolds("follow-\(rotation.rawValue)\(compressed ? "-gzip" : "")", recorded)
    }

    /// `--no-fsync`: the state is replaced durably and the destination never synced, a promise
    /// that holds through a crash of the process (every call kept), not of the machine.
    @Test func withoutFsyncOnlyAProcessCrashIsCovered() async throws {
        let recorded = try await Self.record(.renameAndCreate, compressed: false, synchronizes: false)
        defer { recorded.scratch.remove() }
        let report = recorded.explorer.explore()
        print("crash states: follow-no-fsync points=\(report.points) states=\(report.states) violations=\(report.violations.count) first: \(report.violations.first.map(String.init(describing:)) ?? "none")")
        #expect(!report.violations.isEmpty, "a machine crash can leave the state ahead of a destination never synced")
        #expect(report.violations.allSatisfy { !$0.lost.isEmpty }, "\(report.violations.filter(\.lost.isEmpty).prefix(3))")
    }

    /// Where the first run dies, and when the writer rotates (the follower's read after which,
    /// or while no follower runs).
    struct Variant: Sendable, CustomStringConvertible {
        var rotation: Rotation
        var compressed: Bool
        /// The state whose rename fails (the first record is 1).
        var failing: Int
        var rotatingAt: Int
        var description: String {
            "follow-\(rotation.rawValue)\(compressed ? "-gzip" : "")-dying-at-\(failing)" + (rotatingAt > 6 ? "-rotated-while-stopped" : "")
        }
    }

    /// The restart from other durable points: the first run dies at its first chunk, just
    /// after the rotation; or at its third chunk, the rotation coming while no follower runs
    /// (then the writer's second rotation too).
    @Test(arguments: [
        Variant(rotation: .renameAndCreate, compressed: false, failing: 2, rotatingAt: 1),
        Variant(rotation: .renameAndCreate, compressed: true, failing: 4, rotatingAt: .max),
        Variant(rotation: .copytruncate, compressed: true, failing: 2, rotatingAt: 1),
        Variant(rotation: .copytruncate, compressed: false, failing: 4, rotatingAt: .max),
    ])
    func restartFromAnotherDurablePoint(_ variant: Variant) async throws {
        let recorded = try await Self.record(
            variant.rotation, compressed: variant.compressed, failing: variant.failing, rotatingAt: variant.rotatingAt)
        CrashStateTests.expectHolds(variant.description, recorded)
    }

    // MARK: Planted bugs

    /// The first durable point's `fsync` of the destination moved after the state's directory
    /// `fsync`: the state is durable before the bytes it counts.
    @Test func plantedStateDurableBeforeTheDestinationIsCaught() async throws {
        let recorded = try await Self.record(.renameAndCreate, compressed: false)
        let destination = try #require(Self.destinationNode(recorded))
        try CrashStateTests.expectCaught("the destination's fsync moved after the state's", recorded) { operations, _ in
            let sync = try #require(operations.firstIndex { $0.sync == .node(destination) })
            let stateSync = try #require(operations[sync...].firstIndex { $0.sync == .node(CrashModel.root) })
            operations.insert(operations.remove(at: sync), at: stateSync)
        }
    }

    /// The restart without its cut back: no `ftruncate`, and what it writes goes after the
    /// bytes the first run wrote past the recorded length (dropping the `ftruncate` alone is not
    /// that bug: the sink's writes would still go at the recorded length, over the same bytes).
    @Test func plantedRestartWithoutItsCutBackIsCaught() async throws {
        let recorded = try await Self.record(.renameAndCreate, compressed: false)
        let destination = try #require(Self.destinationNode(recorded))
        try CrashStateTests.expectCaught("the restart's cut back dropped", recorded) { operations, explorer in
            let cut = try #require(operations.firstIndex { $0.call == "ftruncate" })
            guard case .size(destination, let length) = operations[cut].effect else { throw Unshippable(reason: "not the destination's") }
            var before = explorer.initial
            for operation in operations[..<cut] { before.apply(operation) }
            let shift = try #require(before.content(of: destination)).count - length
            #expect(shift > 0, "the first run wrote nothing past the recorded length")
            operations.remove(at: cut)
            for index in cut..<operations.count {
                switch operations[index].effect {
                case .data(destination, let offset, let bytes): operations[index].effect = .data(node: destination, offset: offset + shift, bytes: bytes)
                case .size(destination, let size): operations[index].effect = .size(node: destination, size: size + shift)
                default: break
                }
            }
        }
    }

    /// The first member's trailer (its CRC-32 and length, the last 8 bytes before the first
    /// `fsync` of the destination) never written: a member not closed at a durable point.
    @Test func plantedMemberNotClosedIsCaught() async throws {
        let recorded = try await Self.record(.renameAndCreate, compressed: true)
        let destination = try #require(Self.destinationNode(recorded))
        try CrashStateTests.expectCaught("the first member's trailer not written", recorded) { operations, _ in
            let sync = try #require(operations.firstIndex { $0.sync == .node(destination) })
            var end = 0
            for operation in operations[..<sync] {
                if case .data(destination, let offset, let bytes) = operation.effect { end = max(end, offset + bytes.count) }
            }
            // Each write that reaches into the trailer keeps only its bytes before it.
            let trailer = end - 8
            for index in operations[..<sync].indices.reversed() {
                guard case .data(destination, let offset, let bytes) = operations[index].effect, offset + bytes.count > trailer else { continue }
                let kept = Array(bytes.prefix(max(0, trailer - offset)))
                if kept.isEmpty {
                    operations.remove(at: index)
                } else {
                    operations[index].effect = .data(node: destination, offset: offset, bytes: kept)
                }
            }
        }
    }

    /// The state's temporary file renamed over the state before its `fsync` (the first
    /// durable point that counts a chunk): a crash can leave the name empty or holding zeros.
    @Test func plantedStateRenamedBeforeItsSyncIsCaught() async throws {
        let recorded = try await Self.record(.renameAndCreate, compressed: false)
        let destination = try #require(Self.destinationNode(recorded))
        try CrashStateTests.expectCaught("the state's fsync moved after its rename", recorded) { operations, _ in
            let written = try #require(operations.firstIndex { $0.sync == .node(destination) })
            let rename = try #require(operations[written...].firstIndex { if case .rename = $0.effect { true } else { false } })
            let sync = try #require(operations[written..<rename].lastIndex { $0.sync != nil })
            let directorySync = try #require(operations[rename...].firstIndex { $0.sync == .node(CrashModel.root) })
            operations.insert(operations.remove(at: sync), at: directorySync)
        }
    }

    static func destinationNode(_ recorded: CrashStateTests.Recorded) -> Int? {
        let identity = try? FileStatus.of(recorded.scratch.appending("out/dest")).identity
        return identity.flatMap(recorded.recorder.node(of:))
    }
}
