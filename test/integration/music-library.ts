/**
 * A hand-made library for the music skill tests. The nine techno tracks A-I last 5400 s (90
 * minutes) together; K (300 s) is the only track whose removal leaves exactly 5400 s, because every
 * other track is longer than 300 s. L is house.
 */
export const LIBRARY = [
  { title: 'A', artist: 'Nova', bpm: 120, genre: 'techno', key: '8A', durationSeconds: 360, mood: 'dark' },
  { title: 'B', artist: 'Nova', bpm: 121, genre: 'techno', key: '9A', durationSeconds: 450 },
  { title: 'C', artist: 'Ito', bpm: 122, genre: 'techno', key: '8B', durationSeconds: 480, mood: 'dark' },
  { title: 'D', artist: 'Ito', bpm: 124, genre: 'techno', key: '8A', durationSeconds: 540 },
  { title: 'E', artist: 'Vale', bpm: 126, genre: 'techno', key: '10A', durationSeconds: 600, mood: 'uplifting' },
  { title: 'F', artist: 'Vale', bpm: 128, genre: 'techno', key: '9A', durationSeconds: 720 },
  { title: 'G', artist: 'Rhee', bpm: 130, genre: 'techno', key: '9B', durationSeconds: 660 },
  { title: 'H', artist: 'Rhee', bpm: 132, genre: 'techno', key: '10A', durationSeconds: 810 },
  { title: 'I', artist: 'Okoro', bpm: 134, genre: 'techno', key: '11A', durationSeconds: 780 },
  { title: 'K', artist: 'Okoro', bpm: 140, genre: 'techno', key: '1A', durationSeconds: 300 },
  { title: 'L', artist: 'Sol', bpm: 124, genre: 'House', key: '5A', durationSeconds: 420, mood: 'uplifting' },
];
