#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// The walk: depth-first events, entries looked up in their directory, failures reported and
/// the walk continued, a bounded count of open descriptors at any depth.
@Suite struct TreeWalkerTests {
    /// The events as text: `+dir`, `-dir`, `file`, `!error-path`, `?unreadable-dir`; each
    /// failure also goes to `failed`.
    static func events(_ walker: inout TreeWalker, failed: (FileError) -> Void = { _ in }) -> [String] {
        var result: [String] = []
        while let event = walker.next() {
            switch event {
            case .file(let entry): result.append(entry.relativePath.description)
            case .enterDirectory(let entry, _): result.append("+" + entry.relativePath.description)
            case .leaveDirectory(let entry): result.append("-" + entry.relativePath.description)
            case .failure(let error):
                result.append("!" + (error.path?.lastComponent.description ?? ""))
                failed(error)
            case .unreadableDirectory(let entry, let error):
                result.append("?" + entry.relativePath.description)
                failed(error)
            }
        }
        return result
    }

    @Test func visitsEveryEntryInDepthFirstOrder() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let root = directory.appending("root")
            #expect(mkdir(root.description, 0o755) == 0)
            #expect(mkdir(root.appending("sub").description, 0o755) == 0)
            try writeFile(root.appending("sub/f"), [1])
            #expect(symlink("sub", root.appending("link").description) == 0)
            var walker = TreeWalker(root: root)
            let events = Self.events(&walker)
            #expect(events.first == "+")
            #expect(events.last == "-")
            #expect(Set(events) == ["+", "-", "+sub", "sub/f", "-sub", "link"])
            let sub = try #require(events.firstIndex(of: "+sub"))
            #expect(events[sub + 1] == "sub/f")
            #expect(events[sub + 2] == "-sub")
        }
    }

    @Test func followsLinksOnlyAsAsked() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            #expect(mkdir(directory.appending("real").description, 0o755) == 0)
            try writeFile(directory.appending("real/f"), [1])
            #expect(symlink("real", directory.appending("top").description) == 0)
            #expect(symlink("..", directory.appending("real/up").description) == 0)
            var never = TreeWalker(root: directory.appending("top"))
            #expect(Self.events(&never) == [""])
            var root = TreeWalker(root: directory.appending("top"), followsRootLink: true)
            #expect(Set(Self.events(&root)) == ["+", "f", "up", "-"])
            // -L: "up" leads back to an ancestor: a cycle, reported, never followed.
            var all = TreeWalker(root: directory.appending("real"), followsLinks: true)
            let events = Self.events(&all)
            #expect(events.contains("+up"))
            #expect(events.contains("!real") || events.contains("!up"), "\(events)")
        }
    }

    /// A directory the caller refused (a copy's own, met again through a bind mount or a
    /// link) is a failure naming it, never entered; the rest is walked.
    @Test func aRefusedDirectoryIsReportedNotEntered() async throws {
        try await withScratchDirectory { scratch in
            let root = scratch.path.appending("root")
            #expect(mkdir(root.description, 0o755) == 0)
            #expect(mkdir(root.appending("sub").description, 0o755) == 0)
            try writeFile(root.appending("sub/f"), [1])
            try writeFile(root.appending("g"), [2])
            let sub = try FileStatus.of(root.appending("sub"))
            var walker = TreeWalker(root: root)
            walker.refuseToEnter(device: sub.device, inode: sub.inode, as: "copy/of/it")
            var messages: [String] = []
            let events = Self.events(&walker) { messages.append($0.description) }
            #expect(Set(events) == ["+", "g", "!it", "-"])
            #expect(messages.count == 1)
            #expect(messages.first?.hasSuffix("cannot copy a directory, '\(root.appending("sub"))', into itself, 'copy/of/it'") == true, "\(messages)")
        }
    }

    @Test func deepTreesUseABoundedCountOfDescriptors() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            var path = directory.appending("root")
            #expect(mkdir(path.description, 0o755) == 0)
            let handle = try DirectoryHandle.open(path)
            var current = handle
            for _ in 0..<100 {
                try current.makeDirectory("d", permissions: 0o755)
                current = try current.openDirectory("d")
            }
            _ = try current.openFile("leaf", O_WRONLY | O_CREAT, permissions: 0o644).close()
            path = directory.appending("root")
            var walker = TreeWalker(root: path, maximumOpenDirectories: 5)
            var files = 0, deepest = 0
            while let event = walker.next() {
                #expect(walker.openDirectoryCount <= 5)
                if case .file(let entry) = event {
                    files += 1
                    deepest = entry.depth
                    // What the process really holds, not only the stack's count: the walk's 5,
                    // the root's parent, and the test's own two (the root and the deepest).
                    #expect(Self.openDescriptors(under: directory) <= 5 + 1 + 2)
                }
                if case .failure(let error) = event { Issue.record("\(error)") }
            }
            #expect(files == 1)
            #expect(deepest == 101)
        }
    }

    /// The descriptors of this process open on `directory` or below (`/proc/self/fd`).
    static func openDescriptors(under directory: Pathname) -> Int {
        guard let listing = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(listing) }
        let prefix = directory.description
        var count = 0
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var target = [CChar](repeating: 0, count: 4096)
            let length = readlink("/proc/self/fd/" + name, &target, target.count - 1)
            guard length > 0 else { continue }
            let path = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if path == prefix || path.hasPrefix(prefix + "/") { count += 1 }
        }
        return count
    }

    @Test func aVanishedRootIsAFailureNotACrash() {
        var walker = TreeWalker(root: "/nonexistent/sluice-tree")
        let events = Self.events(&walker)
        #expect(events == ["!sluice-tree"] || events.count == 1, "\(events)")
    }
}
