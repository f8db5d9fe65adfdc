#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

extension FollowCrashStateTests {
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] { CrashStateTests.bytes(count, seed: seed) }

    /// Appends `bytes` to `path` (creating it, or with `truncating`, emptying it first), as the
    /// writer does: directly, never through the recorded seam.
    static func append(_ bytes: [UInt8], to path: Pathname, truncating: Bool = false) {
        let descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_CLOEXEC | (truncating ? O_TRUNC : O_APPEND), 0o644) }
        precondition(descriptor >= 0, "open \(path)")
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    static func rename(_ from: Pathname, _ to: Pathname) {
        _ = from.withCString { old in to.withCString { Glibc.rename(old, $0) } }
    }

    static func content(_ path: Pathname) throws -> [UInt8] {
        let descriptor = try Descriptor.open(path, O_RDONLY)
        defer { try? descriptor.close() }
        let size = Int(try descriptor.status().size)
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = try descriptor.read(fromAbsoluteOffset: 0, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The writer's rotation, after the follower's second read (at 1024 of 1500 bytes): with
    /// `rename`, the file renamed `app.log.1`, 300 bytes more appended to it (a writer that
    /// has not reopened yet), and a new `app.log` of 1000 bytes; with `copytruncate`, 200 bytes
    /// appended, the file copied to `app.log.1`, then cut to nothing and 800 new bytes written.
    static func rotate(_ rotation: Rotation, log: Pathname) {
        let old = Pathname(log.description + ".1")
        switch rotation {
        case .renameAndCreate:
            rename(log, old)
            append(bytes(300, seed: 2), to: old)
            append(bytes(1000, seed: 3), to: log)
        case .copytruncate:
            append(bytes(200, seed: 2), to: log)
            append((try? content(log)) ?? [], to: old)
            append(bytes(800, seed: 3), to: log, truncating: true)
        }
    }

    /// What the writer does while no follower runs: with `rename`, 200 bytes more, then a
    /// second rotation (`app.log.1` shifted to `app.log.2`, a new `app.log` of 600 bytes); with
    /// `copytruncate`, 500 bytes more.
    static func writeWhileStopped(_ rotation: Rotation, log: Pathname) {
        switch rotation {
        case .renameAndCreate:
            append(bytes(200, seed: 4), to: log)
            rename(Pathname(log.description + ".1"), Pathname(log.description + ".2"))
            rename(log, Pathname(log.description + ".1"))
            append(bytes(600, seed: 5), to: log)
        case .copytruncate:
            append(bytes(500, seed: 4), to: log)
        }
    }

    /// The generations as the writer left them, in the order it wrote them.
    static func segments(_ rotation: Rotation, log: Pathname) throws -> [Segment] {
        func identity(_ path: Pathname) throws -> FileIdentity { try FileStatus.of(path).identity }
        let names = [log.description + ".2", log.description + ".1", log.description].map { Pathname($0) }
        switch rotation {
        case .renameAndCreate:
            var segments: [Segment] = []
            for name in names {
                let bytes = try content(name)
                segments.append(Segment(identity: try identity(name), content: bytes, start: segments.last.map { $0.start + $0.content.count } ?? 0))
            }
            return segments
        case .copytruncate:
            // The file before its truncation held what its copy holds.
            let copy = try content(names[1])
            return [
                Segment(identity: try identity(log), content: copy, start: 0),
                Segment(identity: try identity(names[1]), content: copy, start: 0),
                Segment(identity: try identity(log), content: try content(log), start: copy.count),
            ]
        }
    }

    static func followOptions(idle: Duration) -> FollowedFile.Options {
        FollowedFile.Options(chunkSize: chunkSize, settleTime: .milliseconds(20), idleTimeout: idle)
    }

    /// A durable point after every chunk.
    static func shipment(compressed: Bool, synchronizes: Bool) -> FollowShipment.Options {
        var options = FollowShipment.Options()
        options.syncInterval = .zero
        options.synchronizes = synchronizes
        if compressed { options.compression = (.default, 1) }
        return options
    }

    /// The calls of the live system, but the `failing`-th rename over `state` fails (`EIO`,
    /// nothing renamed): the first run dies there, after its chunk was written and made durable.
    static func failingStateRename(_ state: Pathname, failing: Int) -> SystemCalls {
        var system = SystemCalls.live
        let renames = LockedValue(0)
        system.rename = { from, to, flags in
            if String(cString: to) == state.description, renames.withLock({ $0 += 1; return $0 }) == failing {
                return .failure(ErrorNumber(rawValue: EIO))
            }
            return SystemCalls.live.rename(from, to, flags)
        }
        return system
    }

    /// Records the first run and the restart of `rotation`, and sets the explorer's rule.
    /// `synchronizes`: off, as `--no-fsync`; `failing`: the state whose rename fails (the first
    /// record is 1); `rotatingAt`: the follower's read after which the writer rotates, or, past
    /// the reads of the first run, the rotation comes while no follower runs.
    static func record(
        _ rotation: Rotation, compressed: Bool, synchronizes: Bool = true, failing: Int = failingStore, rotatingAt: Int = 2
    ) async throws -> CrashStateTests.Recorded {
        let scratch = try ScratchDirectory(prefix: "sluice-crash-follow")
        let (logs, out) = (scratch.appending("log"), scratch.appending("out"))
        mkdir(logs.description, 0o755)
        mkdir(out.description, 0o755)
        let (log, destination, state) = (logs.appending("app.log"), out.appending("dest"), out.appending("state"))
        append(bytes(1500, seed: 1), to: log)
        let recorder = CrashRecorder(root: out)
        let system = recorder.systemCalls(over: failingStateRename(state, failing: failing))
        let shipment = shipment(compressed: compressed, synchronizes: synchronizes)
        let rotated = LockedValue(false)
        await #expect(throws: FileError.self) {
            try await firstRun(log, to: destination, state: state, shipment: shipment, system: system) { read in
                guard read == rotatingAt else { return }
                rotate(rotation, log: log)
                rotated.withLock { $0 = true }
            }
        }
        // A first run that died before its second read: the rotation comes while none runs.
        if !rotated.withLock({ $0 }) { rotate(rotation, log: log) }
        writeWhileStopped(rotation, log: log)
        let taken = try await restart(log, to: destination, state: state, shipment: shipment, system: system)

        let final = recorder.finalState()
        #expect(recorder.replayed.entries() == final.entries(), "the trace does not replay to the final state")
        let segments = try segments(rotation, log: log)
        let identity = try FileStatus.of(destination).identity
        var stream: [UInt8] = []
        for segment in segments where segment.start + segment.content.count > stream.count {
            stream += segment.content[(stream.count - segment.start)...]
        }
        let expected = Expected(
            followed: log, destination: destination, identity: identity, destinationNode: try #require(recorder.node(of: identity)),
            compressed: compressed, segments: segments, stream: stream)
        #expect(expected.stream.count == (rotation == .renameAndCreate ? 3600 : 3000))
        // The first run died recording its sixth chunk, the second of the file after the rotation.
        if failing == failingStore && rotatingAt == 2 {
            #expect(try position(of: taken.checkpoint, in: segments) == (rotation == .renameAndCreate ? 2312 : 2212))
        }
        var explorer = CrashExplorer(initial: recorder.initial, operations: recorder.operations, final: final)
        explorer.seed = CrashStateTests.seed
        explorer.maximumStatesPerPoint = CrashStateTests.statesPerPoint
        explorer.rule = { state, returned in violations(in: state, returned: returned, expected) }
        return CrashStateTests.Recorded(scratch: scratch, recorder: recorder, explorer: explorer)
    }

    /// `sluice follow --state` on a first run: the state locked (created empty), the
    /// destination made and its directory synced, the first record, then the shipment.
    static func firstRun(
        _ log: Pathname, to destination: Pathname, state path: Pathname, shipment: FollowShipment.Options, system: SystemCalls,
        afterRead: @escaping @Sendable (Int) -> Void
    ) async throws {
        let (stateFile, recorded) = try FollowStateFile.lock(path, system: system)
        #expect(recorded == nil)
        let followed = try await FollowedFile.open(log, options: followOptions(idle: .seconds(3)))
        defer { followed.stop() }
        let reads = LockedValue(0)
        followed.follower.afterRead.withLock { $0 = { afterRead(reads.withLock { $0 += 1; return $0 }) } }
        let executor = followed.preferredExecutor
        try await withTaskExecutorPreference(executor) {
            let file = try AppendingFileSink.open(destination, appending: false, executor: executor, system: system)
            if shipment.synchronizes { try Descriptor.synchronizeDirectory(destination.directory, system: system) }
            let state = FollowState(
                followed: log, destination: .init(path: destination, identity: file.identity, length: await file.length),
                isCompressed: shipment.compression != nil, checkpoint: followed.checkpoint)
            try stateFile.store(state)
            // The run ends (here by a failed store) and lets go of the state at once, as a process
            // that ends does: the shipment's task may hold the file a moment longer.
            defer { stateFile.unlock() }
            try await FollowShipment.ship(
                followed, to: file, file: file, options: shipment, stateFile: stateFile, state: state)
        }
    }

    /// `sluice follow --state` taking a state up: locked, the destination opened appending and
    /// cut back to the recorded length, the follower resumed from the recorded checkpoint.
    ///
    /// - Returns: the state taken up.
    static func restart(
        _ log: Pathname, to destination: Pathname, state path: Pathname, shipment: FollowShipment.Options, system: SystemCalls
    ) async throws -> FollowState {
        let (stateFile, recorded) = try FollowStateFile.lock(path, system: system)
        let taken = try #require(recorded)
        let length = try #require(taken.destination?.length)
        #expect(try FileStatus.of(destination).size > length, "the first run wrote nothing past its last record")
        let followed = try await FollowedFile.open(log, resumingFrom: taken.checkpoint, options: followOptions(idle: .seconds(1)))
        defer { followed.stop() }
        let executor = followed.preferredExecutor
        try await withTaskExecutorPreference(executor) {
            let file = try AppendingFileSink.open(destination, appending: true, executor: executor, system: system)
            #expect(file.identity == taken.destination?.identity)
            try await file.cutBack(to: length)
            let state = FollowState(
                followed: log, destination: .init(path: destination, identity: file.identity, length: await file.length),
                isCompressed: shipment.compression != nil, checkpoint: followed.checkpoint)
            defer { stateFile.unlock() }
            try await FollowShipment.ship(
                followed, to: file, file: file, options: shipment, stateFile: stateFile, state: state)
        }
        #expect(followed.statistics.lostBytes == 0)
        return taken
    }
}
