package facturation

import "testing"

func TestTauxRemise(t *testing.T) {
	tests := []struct {
		quantite int
		want     float64
	}{
		{10, 0}, {49, 0}, {50, 0.05}, {99, 0.05}, {100, 0.10}, {250, 0.10},
	}
	for _, tt := range tests {
		if got := TauxRemise(tt.quantite); got != tt.want {
			t.Errorf("TauxRemise(%d) = %v, want %v", tt.quantite, got, tt.want)
		}
	}
}

func TestArrondir(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{2.344, 2.34}, {2.345, 2.35}, {2.346, 2.35}, {10, 10},
	}
	for _, tt := range tests {
		if got := Arrondir(tt.in); got != tt.want {
			t.Errorf("Arrondir(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTotalLigne(t *testing.T) {
	if got, want := TotalLigne(50, 2.00), 95.00; got != want {
		t.Errorf("TotalLigne(50, 2.00) = %v, want %v", got, want)
	}
	if got, want := TotalLigne(3, 0.783), 2.35; got != want {
		t.Errorf("TotalLigne(3, 0.783) = %v, want %v", got, want)
	}
}
