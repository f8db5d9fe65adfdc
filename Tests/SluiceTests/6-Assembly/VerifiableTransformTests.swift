import Sluice
import SluiceTestSupport
import Testing

/// A codec Sluice does not know, verified end to end through ``Pipeline`` by conforming to
/// ``VerifiableTransform`` alone: what a second codec needs for `--verify`.
@Suite(.timeLimit(.minutes(3)))
struct VerifiableTransformTests {
    static let size = 3 * (1 << 20) + 123
    static let corrupted: Int64 = 1_234_567

    /// This test's own codec, written with the public API only: the encoder passes its input
    /// through and appends its CRC-32 (4 bytes, little-endian); the decoder strips them and
    /// throws ``Mismatch`` when they are not the CRC-32 of what it passed.
    struct CRCTrailer: VerifiableTransform {
        struct Mismatch: Error {}

        let decodes: Bool
        private var crc = CRC32()
        /// The decoder's last 4 bytes: the trailer, once the input ends.
        private var held: [UInt8] = []

        init(decodes: Bool) { self.decodes = decodes }

        var verification: TransformVerification {
            decodes ? .decodesInput : .encodesInput(decoder: { CRCTrailer(decodes: true) })
        }

        mutating func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
            held += chunk.bytes
            let data = decodes ? Chunk(held.dropLast(4)) : chunk
            held = decodes ? Array(held.suffix(4)) : []
            data.withUnsafeBytes { crc.update($0) }
            if data.count > 0 { try await emit(data) }
        }

        mutating func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary {
            let trailer = (0..<4).map { UInt8(truncatingIfNeeded: crc.value >> (8 * $0)) }
            if !decodes { try await emit(Chunk(trailer)) } else if held != trailer { throw Mismatch() }
            return TransformSummary(crc32: crc.value)
        }
    }

    /// An encoder: its output, read back through its decoder, is verified; a byte stored wrong
    /// fails that decoder, whose own error is the cause, and nothing is committed.
    @Test func anEncodersOutputIsDecodedAndItsDecodersErrorIsTheCause() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 3)
            try writeFile(directory.appending("in.bin"), data)
            let good = try await PipelineVerificationTests.copy(
                directory.appending("in.bin"), to: directory.appending("good.crc"), transform: { CRCTrailer(decodes: false) })
            #expect(good.verification == .verified)
            #expect(try readFile(directory.appending("good.crc")).dropLast(4) == data[...])
            let destination = directory.appending("out.crc")
            let error = await #expect(throws: VerificationError.self) {
                try await PipelineVerificationTests.copy(
                    directory.appending("in.bin"), to: destination, system: systemCallsCorruptingWrites(atOffset: Self.corrupted),
                    transform: { CRCTrailer(decodes: false) })
            }
            guard case .undecodable(let cause)? = error?.kind else {
                Issue.record("expected an undecodable output, got \(String(describing: error))")
                return
            }
            #expect(cause is CRCTrailer.Mismatch)
            #expect(error?.description.hasPrefix("'\(destination)' does not decode as it was written: ") == true)
            #expect(!exists(destination))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }

    /// A decoder: its output, read back as it is, is verified; a byte stored wrong is a mismatch
    /// whose offset is found by decoding the source again with the copy's own factory.
    @Test func aDecodersOutputIsReadBackAndTheSourceDecodedAgainLocatesTheDifference() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 4)
            let trailer = (0..<4).map { UInt8(truncatingIfNeeded: CRC32(data).value >> (8 * $0)) }
            try writeFile(directory.appending("in.crc"), data + trailer)
            let good = try await PipelineVerificationTests.copy(
                directory.appending("in.crc"), to: directory.appending("good.bin"), transform: { CRCTrailer(decodes: true) })
            #expect(good.verification == .verified)
            #expect(try readFile(directory.appending("good.bin")) == data)
            let destination = directory.appending("out.bin")
            let error = await #expect(throws: VerificationError.self) {
                try await PipelineVerificationTests.copy(
                    directory.appending("in.crc"), to: destination, system: systemCallsCorruptingWrites(atOffset: Self.corrupted),
                    transform: { CRCTrailer(decodes: true) })
            }
            #expect(error?.kind == .mismatch(firstDifference: Self.corrupted, unlocatedReason: nil))
            #expect(error?.description.contains("its data first differs from the source's decoded data at offset 1234567") == true)
            #expect(!exists(destination))
        }
    }

    /// A transform that does not say how to read its output back is committed unverified, and
    /// the report says why.
    @Test func aTransformThatIsNotVerifiableIsCommittedUnverified() async throws {
        struct Identity: ChunkTransform {
            func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws { try await emit(chunk) }
            func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary { TransformSummary() }
        }
        try await withScratchDirectory { directory in
            try writeFile(directory.appending("in.bin"), [1, 2, 3])
            let report = try await PipelineVerificationTests.copy(
                directory.appending("in.bin"), to: directory.appending("out.bin"), transform: { Identity() })
            #expect(report.verification == .notVerified(reason: "the transform does not say how to read its output back"))
            #expect(try readFile(directory.appending("out.bin")) == [1, 2, 3])
        }
    }

    /// A kind compares its cause by the cause's own `==` when it is `Hashable`, else by its
    /// description.
    @Test func kindsCompareTheirCauses() {
        typealias Kind = VerificationError.Kind
        let truncated = GzipError(.truncatedInput, offset: 3)
        #expect(Kind.undecodable(truncated) == .undecodable(GzipError(.truncatedInput, offset: 3)))
        #expect(Kind.undecodable(truncated) != .undecodable(GzipError(.truncatedInput, offset: 4)))
        #expect(Kind.undecodable(CRCTrailer.Mismatch()) == .undecodable(CRCTrailer.Mismatch()))
        #expect(Kind.undecodable(truncated) != .mismatch(firstDifference: 3, unlocatedReason: nil))
        #expect(Set([Kind.undecodable(truncated), .undecodable(truncated), .mismatch(firstDifference: 3, unlocatedReason: nil)]).count == 2)
    }
}
