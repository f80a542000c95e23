// Package facturation computes invoice lines.
package facturation

// Seuil is a quantity threshold and the discount rate it grants.
type Seuil struct {
	Quantite int
	Taux     float64
}

// Seuils are the quantity discounts, largest first.
var Seuils = []Seuil{{100, 0.10}, {50, 0.05}}

// TauxRemise returns the discount rate for a quantity.
func TauxRemise(quantite int) float64 {
	for _, s := range Seuils {
		if quantite > s.Quantite {
			return s.Taux
		}
	}
	return 0
}
