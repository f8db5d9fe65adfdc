extension String {
    /// The columns a terminal gives the text: 2 for each East Asian wide or fullwidth character
    /// and each emoji shown as a picture, 0 for combining marks and format characters, 1 for the
    /// rest (Unicode UAX #11, as `wcwidth(3)` counts them in a UTF-8 locale, without needing one).
    var displayWidth: Int {
        reduce(0) { $0 + $1.displayWidth }
    }

    /// The longest prefix that fits in `columns`, ending in `…` when something was cut; never
    /// splits a character (a double-width one that would straddle the limit is left out whole).
    func truncated(toColumns columns: Int) -> String {
        guard displayWidth > columns else { return self }
        guard columns > 0 else { return "" }
        var result = ""
        var used = 0
        for character in self {
            let width = character.displayWidth
            if used + width > columns - 1 { break }
            result.append(character)
            used += width
        }
        return result + "…"
    }

    /// The text with control characters (C0, DEL, C1) shown as `?`, so that a file name holding
    /// an escape sequence or a line break cannot move the cursor of a progress line.
    var replacingControlCharacters: String {
        String(String.UnicodeScalarView(unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) ? "?" : scalar
        }))
    }
}

extension Character {
    /// The columns a terminal gives this character (see ``Swift/String/displayWidth``); a
    /// cluster of several scalars (a letter and its accents, an emoji sequence) takes at most 2.
    var displayWidth: Int {
        min(2, unicodeScalars.reduce(0) { $0 + Self.width(of: $1) })
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        let value = scalar.value
        return wideRanges.contains { $0.contains(value) } ? 2 : 1
    }

    /// The East Asian Wide (W) and Fullwidth (F) blocks of UAX #11, merged where adjacent.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,   // Hangul Jamo initial consonants
        0x2E80...0x303E,   // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,   // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK compatibility
        0x3400...0x4DBF,   // CJK unified ideographs extension A
        0x4E00...0x9FFF,   // CJK unified ideographs
        0xA000...0xA4CF,   // Yi
        0xA960...0xA97F,   // Hangul Jamo extended A
        0xAC00...0xD7A3,   // Hangul syllables
        0xF900...0xFAFF,   // CJK compatibility ideographs
        0xFE10...0xFE19,   // vertical forms
        0xFE30...0xFE6F,   // CJK compatibility forms, small form variants
        0xFF00...0xFF60,   // fullwidth forms
        0xFFE0...0xFFE6,   // fullwidth signs
        0x1B000...0x1B2FF, // Kana supplement and extensions, Nushu
        0x20000...0x2FFFD, // CJK extensions B to F, compatibility supplement
        0x30000...0x3FFFD, // CJK extensions G and H
    ]
}
