#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

@Suite struct PathnameTests {
    @Test func descriptionEscapesBytesThatAreNotUTF8() {
        let path = Pathname(bytes: Array("caf".utf8) + [0xE9] + Array(".txt".utf8))
        #expect(path.description == #"caf\xE9.txt"#)
    }

    @Test func descriptionKeepsValidUTF8() {
        #expect(Pathname("café/日本語 🙂.txt").description == "café/日本語 🙂.txt")
    }

    @Test(arguments: [
        ("a\nb", #"a\x0Ab"#),
        ("tab\there", #"tab\x09here"#),
        ("\u{1B}[31mred", #"\x1B[31mred"#),
        ("del\u{7F}", #"del\x7F"#),
        (#"back\slash"#, #"back\x5Cslash"#),
    ])
    func descriptionEscapesControlCharactersAndBackslash(raw: String, expected: String) {
        #expect(Pathname(raw).description == expected)
    }

    @Test func descriptionEscapesEveryByteOfAC1ControlCharacter() {
        // U+009B is the one-character CSI of 8-bit terminals; U+0085 is NEL.
        #expect(Pathname("a\u{9B}31m").description == #"a\xC2\x9B31m"#)
        #expect(Pathname("b\u{85}c").description == #"b\xC2\x85c"#)
    }

    @Test func descriptionEscapesOverlongAndTruncatedSequences() {
        // An overlong "/" (C0 AF) and a lone lead byte at the end.
        #expect(Pathname(bytes: [0x61, 0xC0, 0xAF]).description == #"a\xC0\xAF"#)
        #expect(Pathname(bytes: [0x61, 0xE2, 0x82]).description == #"a\xE2\x82"#)
    }

    @Test(arguments: [
        // path, lastComponent, directory
        ("a/b", "b", "a"),
        ("a/b/", "b", "a"),
        ("/b", "b", "/"),
        ("b", "b", "."),
        ("/", "/", "/"),
        ("//x", "x", "/"),
        ("a//b", "b", "a"),
        ("/a/b/c", "c", "/a/b"),
    ])
    func lastComponentAndDirectory(path: String, last: String, directory: String) {
        let filePath = Pathname(path)
        #expect(filePath.lastComponent == Pathname(last), "lastComponent of '\(path)'")
        #expect(filePath.directory == Pathname(directory), "directory of '\(path)'")
    }

    @Test(arguments: [
        ("a", "b", "a/b"),
        ("a/", "b", "a/b"),
        ("/", "b", "/b"),
        ("", "b", "b"),
        ("/a/b", "c.txt", "/a/b/c.txt"),
    ])
    func appendingAddsOneSlash(base: String, component: String, expected: String) {
        #expect(Pathname(base).appending(Pathname(component)) == Pathname(expected))
    }

    @Test func nonUTF8NameRoundTripsThroughARealFile() async throws {
        try await withScratchDirectory { directory in
            let name = Pathname(bytes: Array("caf".utf8) + [0xE9] + Array(".txt".utf8))
            let path = directory.appending(name)
            try writeFile(path, Array("bonjour".utf8))

            #expect(try entries(in: directory.path) == [name])
            let status = try FileStatus.of(path)
            #expect(status.kind == .regular)
            #expect(status.size == 7)
            #expect(try readFile(Pathname(bytes: path.bytes)) == Array("bonjour".utf8))
            #expect(path.description.hasSuffix(#"/caf\xE9.txt"#))

            // The UTF-8 spelling is another name: it does not exist.
            #expect(throws: FileError.self) { try FileStatus.of(directory.appending("café.txt")) }
        }
    }

    @Test func cStringInitialiserKeepsEveryByte() {
        let bytes: [CChar] = [0x78, CChar(bitPattern: 0xFF), 0x79, 0]
        let path = bytes.withUnsafeBufferPointer { Pathname(cString: $0.baseAddress!) }
        #expect(path.bytes == [0x78, 0xFF, 0x79])
    }
}
